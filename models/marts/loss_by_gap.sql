{{ config(materialized='duckrate_mart') }}
-- Log loss by rating difference rating_a_before - rating_b_before (Cowan, games of chance, Figure 5.1).
{{ duckrate.mart_over_replays('loss_by_gap', {'bin_width': var('duckrate_loss_by_gap_bin_width')}) }}
