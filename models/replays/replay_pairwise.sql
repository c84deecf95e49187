-- Pairwise (Tang, Wang & Jin, Appendix D) over the staged matches: each pair's own shrunk win rate,
-- (5 + wins) / (10 + games); ratings report each player's mean log-odds against the league's field so far.
-- Incremental: continues from replay_pairwise__state when new matches arrive (see macros/materializations).
-- Built only when 'pairwise' is listed in var('duckrate_systems').
{{ config(enabled=('pairwise' in duckrate._systems()), materialized='duckrate_replay', duckrate_system='pairwise') }}
{{ duckrate._replay_input(ref('stg_matches')) }}
