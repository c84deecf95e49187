-- Pairwise (Tang, Wang & Jin, Appendix D) over the staged matches: each pair's own shrunk win rate,
-- (5 + wins) / (10 + games); ratings report each player's mean log-odds against the league's field.
-- Built only when 'pairwise' is listed in var('duckrate_systems').
{{ config(enabled=('pairwise' in duckrate._systems())) }}
{{ duckrate.replay('pairwise', ref('stg_matches')) }}
