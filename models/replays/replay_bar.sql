-- BAR (Weng & Lin) over the staged contest results: one row per (contest, player) with the performance
-- and the rating and sd before and after. Parameters from var('duckrate_params')['bar'].
-- Incremental: continues from replay_bar__state when new contests arrive (see macros/materializations);
-- a contest is one key (contest_id): its rows are added or replaced together.
-- Built only when a contest table is configured (var duckrate_contests_*) and 'bar' is listed in
-- var('duckrate_contest_systems').
{{ config(enabled=(duckrate._contests_configured() and 'bar' in duckrate._contest_systems()), materialized='duckrate_replay', duckrate_system='bar',
          duckrate_key='contest_id') }}
{{ duckrate._contest_replay_input(ref('stg_contest_results')) }}
