-- TrueSkill Through Time (mu, sigma on its own scale) with honest forecasts: each match forecast from the fit over the league's earlier time steps, one row per match over the staged matches.
-- A whole-history replay: it needs every match at once, so each build replays the whole history in one piece
-- (a saved state is never continued; see macros/materializations).
-- Built only when 'ttt' is listed in var('duckrate_systems').
{{ config(enabled=('ttt' in duckrate._systems()), materialized='duckrate_replay', duckrate_system='ttt') }}
{{ duckrate._replay_input(ref('stg_matches')) }}
