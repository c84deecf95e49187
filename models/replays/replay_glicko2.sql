-- Glicko-2 replay (volatility by the Illinois iteration; rating periods as Glicko) over the staged matches: one row per match with the forecast made before it.
-- Incremental: continues from replay_glicko2__state when new matches arrive (see macros/materializations).
-- Built only when 'glicko2' is listed in var('duckrate_systems').
{{ config(enabled=('glicko2' in duckrate._systems()), materialized='duckrate_replay', duckrate_system='glicko2') }}
{{ duckrate._replay_input(ref('stg_matches')) }}
