-- Two-player TrueSkill replay (mu, sigma on TrueSkill's own scale) over the staged matches: one row per match with the forecast made before it.
-- Built only when 'trueskill' is listed in var('duckrate_systems').
{{ config(enabled=('trueskill' in duckrate._systems())) }}
{{ duckrate.replay('trueskill', ref('stg_matches')) }}
