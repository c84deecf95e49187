{{ config(materialized='duckrate_mart') }}
-- Cumulative mean log loss (1/t)·L_t against t/N (Tang, Wang & Jin, Figure 5).
{{ duckrate.mart_over_replays('loss_curve', {'points': var('duckrate_loss_curve_points')}) }}
