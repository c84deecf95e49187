-- Pair inversion and rank deviation of the prior ratings (Ebtekar & Liu, Section 6.2), per league and system.
{{ config(enabled=duckrate._contests_configured()) }}
{{ duckrate.mart('contest_metrics', ref('contest_replays'), {
    'min_contests': var('duckrate_contest_min_contests'),
    'warmup': var('duckrate_contest_warmup')}) }}
