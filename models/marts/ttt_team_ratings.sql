-- TrueSkill Through Time of all staged team results: every player's skill at every time step they played, a
-- team's performance the sum of its players'. Parameters: var('duckrate_ttt_params'); when it names no p_draw,
-- the share of staged matches with two teams in one place. The time step: var('duckrate_history_period').
-- Built when team results are configured and var('duckrate_history_fits') lists ttt_team_fit (null: it does).
{{ config(enabled=(duckrate._teams_configured() and 'ttt_team_fit' in duckrate._history_fits())) }}
{{ duckrate.ttt_team_fit(ref('stg_team_results'), duckrate._ttt_params(ref('stg_team_results'), teams=true)) }}
