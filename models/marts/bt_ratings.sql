-- Bradley-Terry fit of all staged matches, one row per league and player, with sd and 95% interval.
-- Parameters: var('duckrate_bt_params'), e.g. {prior_sd: 200, home_advantage: true}.
{{ duckrate.bt_fit(ref('stg_matches')) }}
