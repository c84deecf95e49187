-- The Codeforces system over the staged contest results: one row per (contest, player) with the performance
-- and the rating before and after. Parameters from var('duckrate_params')['codeforces'].
-- Incremental: continues from replay_codeforces__state when new contests arrive (see macros/materializations);
-- a contest is one key (contest_id): its rows are added or replaced together.
-- Built only when a contest table is configured (var duckrate_contests_*) and 'codeforces' is listed in
-- var('duckrate_contest_systems').
{{ config(enabled=(duckrate._contests_configured() and 'codeforces' in duckrate._contest_systems()), materialized='duckrate_replay', duckrate_system='codeforces',
          duckrate_key='contest_id') }}
{{ duckrate._contest_replay_input(ref('stg_contest_results')) }}
