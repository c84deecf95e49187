-- Whole-History Rating of all staged matches: every player's rating at every time step they played, smoothed
-- over the whole history (Coulom 2008). Parameters: var('duckrate_whr_params'), e.g. {w2: 100}; the time step:
-- var('duckrate_history_period') (null: a day for a TIMESTAMP or DATE played_at, each value for an integer one).
{{ config(enabled=('whr_fit' in duckrate._history_fits())) }}
{{ duckrate.whr_fit(ref('stg_matches')) }}
