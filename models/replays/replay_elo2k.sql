-- Elo2k / mElo (Tang, Wang & Jin, Appendix D) over the staged matches: a vector pair per player, able to
-- forecast non-transitive games; ratings report each player's mean log-odds against the league's field so far.
-- Incremental: continues from replay_elo2k__state when new matches arrive (see macros/materializations).
-- Built only when 'elo2k' is listed in var('duckrate_systems').
{{ config(enabled=('elo2k' in duckrate._systems()), materialized='duckrate_replay', duckrate_system='elo2k') }}
{{ duckrate._replay_input(ref('stg_matches')) }}
