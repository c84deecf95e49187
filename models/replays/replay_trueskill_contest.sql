-- TrueSkill for rankings (TrueSkillSPb) over the staged contest results: one row per (contest, player) with the performance
-- and mu and sigma before and after. Parameters from var('duckrate_params')['trueskill_spb'].
-- Incremental: continues from replay_trueskill_spb__state when new contests arrive (see macros/materializations);
-- a contest is one key (contest_id): its rows are added or replaced together.
-- Built only when a contest table is configured (var duckrate_contests_*) and 'trueskill_spb' is listed in
-- var('duckrate_contest_systems').
{{ config(enabled=(duckrate._contests_configured() and 'trueskill_spb' in duckrate._contest_systems()), materialized='duckrate_replay', duckrate_system='trueskill_spb',
          duckrate_key='contest_id') }}
{{ duckrate._contest_replay_input(ref('stg_contest_results')) }}
