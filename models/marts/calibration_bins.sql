-- Reliability of each system's forecasts: mean forecast against mean result per forecast bin.
{{ duckrate.mart('calibration_bins', ref('replays'), {'bins': var('duckrate_calibration_bins', 10)}) }}
