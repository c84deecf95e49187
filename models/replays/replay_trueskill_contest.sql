-- TrueSkill for rankings (TrueSkillSPb) over the staged contest results: one row per (contest, player) with the performance
-- and mu and sigma before and after. Parameters from var('duckrate_params')['trueskill_contest'].
-- Incremental: continues from replay_trueskill_contest__state when new contests arrive (see macros/materializations);
-- a contest is one key (contest_id): its rows are added or replaced together.
-- Built only when a contest table is configured (var duckrate_contests_*) and 'trueskill_contest' is listed in
-- var('duckrate_contest_systems').
{{ config(enabled=(duckrate._contests_configured() and 'trueskill_contest' in duckrate._contest_systems()), materialized='duckrate_replay', duckrate_system='trueskill_contest',
          duckrate_key='contest_id') }}
{{ duckrate._contest_replay_input(ref('stg_contest_results')) }}
