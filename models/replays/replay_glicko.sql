-- Glicko replay (rating periods from a period column or period_length) over the staged matches: one row per match with the forecast made before it.
-- Built only when 'glicko' is listed in var('duckrate_systems').
{{ config(enabled=('glicko' in duckrate._systems())) }}
{{ duckrate.replay('glicko', ref('stg_matches')) }}
