-- Two-player TrueSkill replay (mu, sigma on TrueSkill's own scale) over the staged matches: one row per match with the forecast made before it.
-- Incremental: continues from replay_trueskill__state when new matches arrive (see macros/materializations).
-- Built only when 'trueskill' is listed in var('duckrate_systems').
{{ config(enabled=('trueskill' in duckrate._systems()), materialized='duckrate_replay', duckrate_system='trueskill') }}
{{ duckrate._replay_input(ref('stg_matches')) }}
