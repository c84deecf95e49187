-- Pair inversion and rank deviation of the prior ratings (Ebtekar & Liu 2021, Section 6.2), per league and system:
-- by default the Elo-MMR reference implementation's metric (the paper's Table 2), see docs/contests.md.
{{ config(enabled=duckrate._contests_configured()) }}
{{ duckrate.mart('contest_metrics', ref('contest_replays'), {
    'definition': var('duckrate_contest_metric_definition'),
    'min_history': var('duckrate_contest_min_history'),
    'top': var('duckrate_contest_top'),
    'min_contests': var('duckrate_contest_min_contests'),
    'warmup': var('duckrate_contest_warmup')}) }}
