-- Glicko replay (rating periods from a period column or period_length) over the staged matches: one row per match with the forecast made before it.
-- Incremental: continues from replay_glicko__state when new matches arrive (see macros/materializations).
-- Built only when 'glicko' is listed in var('duckrate_systems').
{{ config(enabled=('glicko' in duckrate._systems()), materialized='duckrate_replay', duckrate_system='glicko') }}
{{ duckrate._replay_input(ref('stg_matches')) }}
