-- Generated from duckrate's registry by `python -m duckrate.cli generate`: do not edit.
-- Weng-Lin Thurstone-Mosteller, full pairing over team matches (Weng & Lin, JMLR 2011, Algorithm 3), as
-- openskill 6.2.0 rates them: ties, margins, partial play.
-- Over the staged team results: one row per (match, player) with the ratings around the match and the
-- forecast made before it. Parameters from var('duckrate_params')['thurstone_mosteller_full'].
-- Incremental: continues from replay_thurstone_mosteller_full__state when new matches arrive (see macros/materializations);
-- a match is one key (match_id): its rows are added or replaced together.
-- Built only when a team results table is configured (var duckrate_teams_*) and the system is listed in
-- var('duckrate_team_systems').
{{ config(enabled=(duckrate._teams_configured() and 'thurstone_mosteller_full' in duckrate._team_systems()), materialized='duckrate_replay', duckrate_system='thurstone_mosteller_full',
          duckrate_key='match_id') }}
{{ duckrate._team_replay_input(ref('stg_team_results')) }}
