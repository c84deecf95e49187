-- Log loss, Brier score and accuracy of each system's forecasts, overall and among established players.
{{ duckrate.mart('calibration_summary', ref('replays'), {
    'min_games': var('duckrate_established_min_games', 10),
    'max_sd': var('duckrate_established_max_sd', {'chance': 70}),
    'warmup': var('duckrate_warmup', 0.0)}) }}
