-- Elo replay over the staged matches: one row per match with the forecast made before it.
-- Incremental: continues from replay_elo__state when new matches arrive (see macros/materializations).
-- Built only when 'elo' is listed in var('duckrate_systems').
{{ config(enabled=('elo' in duckrate._systems()), materialized='duckrate_replay', duckrate_system='elo') }}
{{ duckrate._replay_input(ref('stg_matches')) }}
