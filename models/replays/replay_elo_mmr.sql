-- Elo-MMR replay over the staged contest results: one row per (contest, player) with the performance and
-- the rating before and after. Parameters from var('duckrate_params')['elo_mmr'].
-- Built only when a contest table is configured (var duckrate_contests_*).
{{ config(enabled=duckrate._contests_configured()) }}
{{ duckrate.replay('elo_mmr', ref('stg_contest_results')) }}
