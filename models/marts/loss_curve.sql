-- Cumulative mean log loss (1/t)·L_t against t/N (Tang, Wang & Jin, Figure 5).
{{ duckrate.mart('loss_curve', ref('replays'), {'points': var('duckrate_loss_curve_points', 200)}) }}
