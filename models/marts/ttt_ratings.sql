-- TrueSkill Through Time of all staged matches: every player's skill at every time step they played, from
-- forward-backward passes over the whole history. Parameters: var('duckrate_ttt_params'); when it names no
-- p_draw, the staged matches' share of draws (the draw probability between equal players must be above 0
-- when there are draws). The time step: var('duckrate_history_period').
{{ config(enabled=('ttt_fit' in duckrate._history_fits())) }}
{{ duckrate.ttt_fit(ref('stg_matches'), duckrate._ttt_params(ref('stg_matches'))) }}
