-- Elo-MMR replay over the staged contest results: one row per (contest, player) with the performance and
-- the rating before and after. Parameters from var('duckrate_params')['elo_mmr'].
-- Incremental: continues from replay_elo_mmr__state when new contests arrive (see macros/materializations);
-- a contest is one key (contest_id): its rows are added or replaced together.
-- Built only when a contest table is configured (var duckrate_contests_*) and 'elo_mmr' is listed in
-- var('duckrate_contest_systems').
{{ config(enabled=(duckrate._contests_configured() and 'elo_mmr' in duckrate._contest_systems()), materialized='duckrate_replay', duckrate_system='elo_mmr',
          duckrate_key='contest_id') }}
{{ duckrate._contest_replay_input(ref('stg_contest_results')) }}
