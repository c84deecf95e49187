-- Elo2k / mElo (Tang, Wang & Jin, Appendix D) over the staged matches: a vector pair per player, able to
-- forecast non-transitive games; ratings report each player's mean log-odds against the league's field.
-- Built only when 'elo2k' is listed in var('duckrate_systems').
{{ config(enabled=('elo2k' in duckrate._systems())) }}
{{ duckrate.replay('elo2k', ref('stg_matches')) }}
