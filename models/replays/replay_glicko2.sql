-- Glicko-2 replay (volatility by the Illinois iteration; rating periods as Glicko) over the staged matches: one row per match with the forecast made before it.
-- Built only when 'glicko2' is listed in var('duckrate_systems').
{{ config(enabled=('glicko2' in duckrate._systems())) }}
{{ duckrate.replay('glicko2', ref('stg_matches')) }}
