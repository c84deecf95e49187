-- Does Bradley-Terry fit the staged matches? One row per (league, test): the split, martingale and
-- low-rank likelihood-ratio tests, matchmaking correlation and order permutation (Tang, Wang & Jin,
-- Section 3.1, Appendices B-C). Parameters (seed, ...) from var('duckrate_bt_test_params').
{{ duckrate.mart('bt_lr_test', ref('stg_matches'), var('duckrate_bt_test_params', {})) }}
