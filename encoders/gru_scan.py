"""One direction of a one-layer GRU over a padded batch, with a backward pass that computes the weight
gradients in one matrix product over all time steps.

The recurrence is PyTorch's ``nn.GRU`` (gates in the order reset, update, new; Cho et al. 2014):

    r_t = σ(W_ir x_t + b_ir + W_hr h_{t−1} + b_hr)
    z_t = σ(W_iz x_t + b_iz + W_hz h_{t−1} + b_hz)
    n_t = tanh(W_in x_t + b_in + r_t ⊙ (W_hn h_{t−1} + b_hn))
    h_t = (1 − z_t) ⊙ n_t + z_t ⊙ h_{t−1},   h_0 = 0.

Autograd through ``nn.GRU`` on the CPU accumulates ∂L/∂W_hh one time step at a time, a product with the batch
(32 rows) as its inner dimension per step plus an addition of a full [3n, n] matrix: at n = 1024 about a
quarter of a training step. Here the forward pass keeps each step's gates, and the backward pass walks the
steps back computing only what the recurrence needs (∂L/∂h_{t−1}), then forms ∂L/∂W_hh = Σ_t g_tᵀ h_{t−1}
as one product over all T·B rows, and ∂L/∂W_ih, ∂L/∂x likewise. The arithmetic is the same as ``nn.GRU``'s;
only the order of the sums differs (equal to float rounding; ``tests/test_char_rnn_model.py`` checks it and
``torch.autograd.gradcheck`` the gradients in double precision).
"""

from __future__ import annotations

import torch


class _GRUScan(torch.autograd.Function):
    """The scan over time-major inputs [T, B, d] (each step's rows contiguous)."""

    @staticmethod
    def forward(ctx, x, w_ih, w_hh, b_ih, b_hh):  # noqa: D102 - documented in the module docstring
        steps, batch, _ = x.shape
        hidden = w_hh.shape[1]
        projected = torch.addmm(b_ih, x.reshape(steps * batch, -1), w_ih.t()).view(steps, batch, 3 * hidden)
        out = x.new_empty(steps, batch, hidden)
        gates = x.new_empty(steps, batch, 3 * hidden)  # r, z, n of every step
        recurrent_new = x.new_empty(steps, batch, hidden)  # W_hn h_{t-1} + b_hn
        h = x.new_zeros(batch, hidden)
        for t in range(steps):
            gh = torch.addmm(b_hh, h, w_hh.t())
            pre = projected[t]
            r, z, n = gates[t].split(hidden, dim=1)
            torch.sigmoid(pre[:, :hidden] + gh[:, :hidden], out=r)
            torch.sigmoid(pre[:, hidden:2 * hidden] + gh[:, hidden:2 * hidden], out=z)
            recurrent_new[t] = gh[:, 2 * hidden:]
            torch.tanh(torch.addcmul(pre[:, 2 * hidden:], r, recurrent_new[t]), out=n)
            h = torch.addcmul(n, z, h - n, out=out[t])
        ctx.save_for_backward(x, w_ih, w_hh, out, gates, recurrent_new)
        return out

    @staticmethod
    def backward(ctx, grad_out):  # noqa: D102
        x, w_ih, w_hh, out, gates, recurrent_new = ctx.saved_tensors
        steps, batch, _ = x.shape
        hidden = w_hh.shape[1]
        previous = torch.cat([out.new_zeros(1, batch, hidden), out[:-1]])
        grad_input_gates = out.new_empty(steps, batch, 3 * hidden)
        grad_recurrent = out.new_empty(steps, batch, 3 * hidden)
        dh = out.new_zeros(batch, hidden)
        for t in reversed(range(steps)):
            dh = dh + grad_out[t]
            r, z, n = gates[t].split(hidden, dim=1)
            d_r, d_z, d_n = grad_input_gates[t].split(hidden, dim=1)
            torch.mul(dh * (1 - z), 1 - n * n, out=d_n)
            torch.mul(dh * (previous[t] - n), z * (1 - z), out=d_z)
            torch.mul(d_n * recurrent_new[t], r * (1 - r), out=d_r)
            recurrent = grad_recurrent[t]
            recurrent[:, : 2 * hidden] = grad_input_gates[t][:, : 2 * hidden]
            torch.mul(d_n, r, out=recurrent[:, 2 * hidden:])
            dh = torch.addmm(dh * z, recurrent, w_hh)
        flat_gates = grad_input_gates.view(steps * batch, -1)
        flat_recurrent = grad_recurrent.view(steps * batch, -1)
        grad_x = (flat_gates @ w_ih).view_as(x) if ctx.needs_input_grad[0] else None
        grad_w_ih = flat_gates.t() @ x.reshape(steps * batch, -1)
        grad_w_hh = flat_recurrent.t() @ previous.view(steps * batch, -1)
        return grad_x, grad_w_ih, grad_w_hh, flat_gates.sum(dim=0), flat_recurrent.sum(dim=0)


def gru_scan(x: torch.Tensor, w_ih: torch.Tensor, w_hh: torch.Tensor, b_ih: torch.Tensor,
             b_hh: torch.Tensor) -> torch.Tensor:
    """Outputs [B, T, n] of the GRU direction with these weights on ``x`` [B, T, d], from h_0 = 0."""
    return _GRUScan.apply(x.transpose(0, 1).contiguous(), w_ih, w_hh, b_ih, b_hh).transpose(0, 1)
