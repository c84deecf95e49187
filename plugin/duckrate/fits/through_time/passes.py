"""Message passing over one league's history: the initial forward pass, then forward-backward sweeps to
convergence, on the arrays of :mod:`.layout`.

Each skill slot ``s`` (a player at one time step) keeps three Gaussian messages in natural parameters
(``tau = mu / sigma^2``, ``pi = 1 / sigma^2``), so that products and quotients of Gaussians are sums and
differences (Landfried & Mocskos, the Gaussian product and quotient):

- ``forward``: the prior for a player's first slot, else the previous slot's ``forward * likelihood`` with
  its variance grown by the drift ``gamma^2 t`` over the ``t`` steps between them (Dangauthier et al. 2007,
  the skill dynamics; Landfried & Mocskos, the forward and backward messages);
- ``backward``: the next slot's ``likelihood * backward``, grown by ``gamma^2 t`` the same way; uniform for
  a player's last slot;
- ``likelihood``: the product of the messages of the slot's games (:mod:`.game`), each game's own
  message kept per game and side, so that a game sees its players' beliefs without itself (the
  ``within_prior``: ``forward * backward * likelihood / own message``).

The posterior of a slot is ``forward * backward * likelihood``. The schedule is the package's
(``trueskillthroughtime`` 1.1.0, ``History``): the initial pass walks the batches in time order, taking
each batch's forward messages and updating its games once, in order; each later iteration is a backward
sweep (batches ``n-2 .. 0``: new backward messages, one pass over the batch's games) then a forward sweep
(batches ``1 .. n-1``: new forward messages, one pass), and its step is the largest change of any
posterior's mean or sd across the sweep. Iterations stop when both are at most ``epsilon`` or after
``iterations``. A history of one batch has no sweeps: each iteration runs that batch's games to their own
convergence instead (at most 20 passes, to 1e-6, as the package's ``Batch.convergence``).
"""

from __future__ import annotations

import math

import numpy as np

from duckrate.core.jit import inlined_kernel, kernel
from duckrate.fits.through_time.game import game_messages

# columns of the per-slot state
FWD_TAU, FWD_PI, BACK_TAU, BACK_PI, LIK_TAU, LIK_PI = 0, 1, 2, 3, 4, 5
# a one-batch history: each iteration runs the batch to this step, at most this many passes (the package's
# Batch.convergence defaults)
BATCH_EPSILON = 1e-6
BATCH_ITERATIONS = 20


@inlined_kernel
def _forget(tau, pi, drift):
    """(tau, pi) of ``N(mu, sigma^2 + drift)`` for ``N(mu, sigma^2)`` given as ``(tau, pi)``; uniform stays
    uniform."""
    if not pi > 0.0:
        return 0.0, 0.0
    shrink = 1.0 / (1.0 + pi * drift)  # sigma^2 / (sigma^2 + drift)
    return tau * shrink, pi * shrink


@inlined_kernel
def _set_forward(s, state, slot_prev, slot_player, slot_elapsed, prior_tau, prior_pi, gamma2):
    p = slot_prev[s]
    if p < 0:
        state[s, FWD_TAU] = prior_tau[slot_player[s]]
        state[s, FWD_PI] = prior_pi[slot_player[s]]
    else:
        tau, pi = _forget(
            state[p, FWD_TAU] + state[p, LIK_TAU], state[p, FWD_PI] + state[p, LIK_PI], gamma2 * slot_elapsed[s]
        )
        state[s, FWD_TAU] = tau
        state[s, FWD_PI] = pi


@inlined_kernel
def _set_backward(s, state, slot_next, slot_elapsed, gamma2):
    n = slot_next[s]
    if n < 0:
        state[s, BACK_TAU] = 0.0
        state[s, BACK_PI] = 0.0
    else:
        tau, pi = _forget(
            state[n, LIK_TAU] + state[n, BACK_TAU], state[n, LIK_PI] + state[n, BACK_PI], gamma2 * slot_elapsed[n]
        )
        state[s, BACK_TAU] = tau
        state[s, BACK_PI] = pi


@inlined_kernel
def _posterior(state, s):
    """(mu, sigma) of slot ``s``'s posterior ``likelihood * backward * forward``."""
    pi = state[s, LIK_PI] + state[s, BACK_PI] + state[s, FWD_PI]
    tau = state[s, LIK_TAU] + state[s, BACK_TAU] + state[s, FWD_TAU]
    variance = 1.0 / pi
    return tau * variance, math.sqrt(variance)


@inlined_kernel
def _batch_pass(b, batch_games, game_slots, game_outcome, state, message, beta2, margin):
    """One pass over batch ``b``'s games in order: each game's messages from its players' beliefs without it
    (the package's ``Batch.iteration``)."""
    for g in range(batch_games[b], batch_games[b + 1]):
        sa = game_slots[g, 0]
        sb = game_slots[g, 1]
        tau_a = state[sa, LIK_TAU] + state[sa, BACK_TAU] + state[sa, FWD_TAU] - message[g, 0]
        pi_a = state[sa, LIK_PI] + state[sa, BACK_PI] + state[sa, FWD_PI] - message[g, 1]
        tau_b = state[sb, LIK_TAU] + state[sb, BACK_TAU] + state[sb, FWD_TAU] - message[g, 2]
        pi_b = state[sb, LIK_PI] + state[sb, BACK_PI] + state[sb, FWD_PI] - message[g, 3]
        var_a = 1.0 / pi_a
        var_b = 1.0 / pi_b
        new_tau_a, new_pi_a, new_tau_b, new_pi_b = game_messages(
            tau_a * var_a, var_a, tau_b * var_b, var_b, game_outcome[g], beta2, margin
        )
        state[sa, LIK_TAU] = (state[sa, LIK_TAU] - message[g, 0]) + new_tau_a
        state[sa, LIK_PI] = (state[sa, LIK_PI] - message[g, 1]) + new_pi_a
        state[sb, LIK_TAU] = (state[sb, LIK_TAU] - message[g, 2]) + new_tau_b
        state[sb, LIK_PI] = (state[sb, LIK_PI] - message[g, 3]) + new_pi_b
        message[g, 0] = new_tau_a
        message[g, 1] = new_pi_a
        message[g, 2] = new_tau_b
        message[g, 3] = new_pi_b


@inlined_kernel
def _remember(b, batch_slots, state, mu, sigma):
    for s in range(batch_slots[b], batch_slots[b + 1]):
        mu[s], sigma[s] = _posterior(state, s)


@inlined_kernel
def _change(b, batch_slots, state, mu, sigma, step_mu, step_sigma):
    """The largest change of batch ``b``'s posteriors since :func:`_remember`, folded into the step; the
    new posteriors replace the remembered ones."""
    for s in range(batch_slots[b], batch_slots[b + 1]):
        new_mu, new_sigma = _posterior(state, s)
        step_mu = max(step_mu, abs(mu[s] - new_mu))
        step_sigma = max(step_sigma, abs(sigma[s] - new_sigma))
        mu[s] = new_mu
        sigma[s] = new_sigma
    return step_mu, step_sigma


@kernel
def fit_history(
    batch_games,
    batch_slots,
    game_slots,
    game_outcome,
    slot_player,
    slot_prev,
    slot_next,
    slot_elapsed,
    prior_mu,
    prior_sigma,
    beta,
    gamma,
    margin,
    epsilon,
    iterations,
):
    """Fit one league's history (arrays of :class:`~.layout.Layout`; ``prior_mu``, ``prior_sigma`` per
    player). Returns ``(mu, sigma, iterations, step_mu, step_sigma)``: each slot's posterior mean and sd,
    the iterations run and the last iteration's step (``inf`` when none ran)."""
    n_batches = batch_games.shape[0] - 1
    n_slots = slot_player.shape[0]
    n_games = game_slots.shape[0]
    gamma2 = gamma * gamma
    beta2 = beta * beta
    prior_pi = 1.0 / (prior_sigma * prior_sigma)
    prior_tau = prior_mu * prior_pi
    state = np.zeros((n_slots, 6), dtype=np.float64)
    message = np.zeros((n_games, 4), dtype=np.float64)
    mu = np.empty(n_slots, dtype=np.float64)
    sigma = np.empty(n_slots, dtype=np.float64)

    # the initial pass: TrueSkill's filtering, batch by batch
    for b in range(n_batches):
        for s in range(batch_slots[b], batch_slots[b + 1]):
            _set_forward(s, state, slot_prev, slot_player, slot_elapsed, prior_tau, prior_pi, gamma2)
        _batch_pass(b, batch_games, game_slots, game_outcome, state, message, beta2, margin)

    step_mu = np.inf
    step_sigma = np.inf
    done = 0
    if n_batches > 0:
        for b in range(n_batches):
            _remember(b, batch_slots, state, mu, sigma)
    while (step_mu > epsilon or step_sigma > epsilon) and done < iterations:
        step_mu = 0.0
        step_sigma = 0.0
        if n_batches == 1:
            _remember(0, batch_slots, state, mu, sigma)
            start_mu = mu[batch_slots[0] : batch_slots[1]].copy()
            start_sigma = sigma[batch_slots[0] : batch_slots[1]].copy()
            inner_mu = np.inf
            inner_sigma = np.inf
            passes = 0
            while (inner_mu > BATCH_EPSILON or inner_sigma > BATCH_EPSILON) and passes < BATCH_ITERATIONS:
                _batch_pass(0, batch_games, game_slots, game_outcome, state, message, beta2, margin)
                inner_mu, inner_sigma = _change(0, batch_slots, state, mu, sigma, 0.0, 0.0)
                passes += 1
            for k in range(start_mu.shape[0]):
                step_mu = max(step_mu, abs(start_mu[k] - mu[batch_slots[0] + k]))
                step_sigma = max(step_sigma, abs(start_sigma[k] - sigma[batch_slots[0] + k]))
        else:
            for b in range(n_batches - 2, -1, -1):
                for s in range(batch_slots[b], batch_slots[b + 1]):
                    _set_backward(s, state, slot_next, slot_elapsed, gamma2)
                _batch_pass(b, batch_games, game_slots, game_outcome, state, message, beta2, margin)
                step_mu, step_sigma = _change(b, batch_slots, state, mu, sigma, step_mu, step_sigma)
            for b in range(1, n_batches):
                for s in range(batch_slots[b], batch_slots[b + 1]):
                    _set_forward(s, state, slot_prev, slot_player, slot_elapsed, prior_tau, prior_pi, gamma2)
                _batch_pass(b, batch_games, game_slots, game_outcome, state, message, beta2, margin)
                step_mu, step_sigma = _change(b, batch_slots, state, mu, sigma, step_mu, step_sigma)
        done += 1
    for s in range(n_slots):
        mu[s], sigma[s] = _posterior(state, s)
    return mu, sigma, done, step_mu, step_sigma
