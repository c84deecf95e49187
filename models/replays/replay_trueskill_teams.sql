-- Generated from duckrate's registry by `python -m duckrate.cli generate`: do not edit.
-- TrueSkill for teams (Herbrich, Minka & Graepel, NIPS 2006): a team's performance is the weighted sum of
-- its players', any number of teams, draws by a draw margin, partial play; as the trueskill package 0.4.5
-- computes it.
-- Over the staged team results: one row per (match, player) with the ratings around the match and the
-- forecast made before it. Parameters from var('duckrate_params')['trueskill_teams'].
-- Incremental: continues from replay_trueskill_teams__state when new matches arrive (see macros/materializations);
-- a match is one key (match_id): its rows are added or replaced together.
-- Built only when a team results table is configured (var duckrate_teams_*) and the system is listed in
-- var('duckrate_team_systems').
{{ config(enabled=(duckrate._teams_configured() and 'trueskill_teams' in duckrate._team_systems()), materialized='duckrate_replay', duckrate_system='trueskill_teams',
          duckrate_key='match_id') }}
{{ duckrate._team_replay_input(ref('stg_team_results')) }}
