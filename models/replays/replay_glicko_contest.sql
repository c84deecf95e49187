-- Glicko for contests (the reference's Glicko) over the staged contest results: one row per (contest, player) with the performance
-- and the rating and sd before and after. Parameters from var('duckrate_params')['glicko_contest'].
-- Incremental: continues from replay_glicko_contest__state when new contests arrive (see macros/materializations);
-- a contest is one key (contest_id): its rows are added or replaced together.
-- Built only when a contest table is configured (var duckrate_contests_*) and 'glicko_contest' is listed in
-- var('duckrate_contest_systems').
{{ config(enabled=(duckrate._contests_configured() and 'glicko_contest' in duckrate._contest_systems()), materialized='duckrate_replay', duckrate_system='glicko_contest',
          duckrate_key='contest_id') }}
{{ duckrate._contest_replay_input(ref('stg_contest_results')) }}
