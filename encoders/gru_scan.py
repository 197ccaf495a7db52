"""A one-layer bidirectional GRU over a padded batch for training on the CPU: both directions in one autograd
function, each a loop over the time steps that runs only the captions still going (as a packed sequence does),
with a hand-written backward pass that forms the weight gradients in one matrix product over all steps.

The recurrence is PyTorch's ``nn.GRU`` (gates in the order reset, update, new; Cho et al. 2014):

    r_t = σ(W_ir x_t + b_ir + W_hr h_{t−1} + b_hr)
    z_t = σ(W_iz x_t + b_iz + W_hz h_{t−1} + b_hz)
    n_t = tanh(W_in x_t + b_in + r_t ⊙ (W_hn h_{t−1} + b_hn))
    h_t = (1 − z_t) ⊙ n_t + z_t ⊙ h_{t−1},   h_0 = 0;

the backward direction reads each caption from its last character to its first.

Why not ``nn.GRU``: its packed CPU layer projects the inputs of all steps at once and slices one step at a time,
and the backward pass of every slice fills a zero gradient of the whole projection — quadratic in the caption
length — and autograd accumulates ∂L/∂W_hh one step at a time (a product with the batch as its inner dimension
plus an addition of a [3n, n] matrix per step). Here, at n = 1024, batch 32 and about 55 steps, the recurrent
products are over 80% of a training step, and the rest is arranged to cost little beside them:

- **Rows**: the batch is sorted by length (longest first), so at step t the captions still running are the
  first b_t rows and every per-step operation is over those rows only, as with a packed sequence (no work on
  padding). The backward direction reads each caption reversed within its length; the outputs are scattered
  back to the caller's [B, T, 2n] layout, zero past each caption's length (as ``pad_packed_sequence`` leaves
  them).
- **Input projection**: the input of a step is a character's embedding, so W_ih e + b_ih is computed once per
  call for every character of the vocabulary (a [V, 3n] table) and a step gathers its rows; the gradient of
  the table is the sum of the gate gradients of each character's positions (one ``index_add_``), and those of
  the embedding, W_ih and b_ih follow from it by small products.
- **Forward step**: the product h_{t−1} W_hhᵀ + b_hh (none at step 0, h_0 = 0), σ of the r, z columns,
  ``addcmul`` + ``tanh_`` for n_t and one ``lerp`` for h_t = n_t + z_t ⊙ (h_{t−1} − n_t). The same step, while its
  gates are in cache, stores the coefficients that turn ∂L/∂h_t into the gate gradients, none of which depend
  on ∂L/∂h_t: (1 − z)(1 − n²)(W_hn h + b_hn) r(1 − r) for r, (h_t − n) (1 − z) = (h_{t−1} − n) z (1 − z) for z,
  (1 − z)(1 − n²) for n, and that times r for the recurrent part of the n gate; and z itself.
- **Backward step**: one multiplication of those four blocks by ∂L/∂h_t, one ``addcmul`` (the step's output
  gradient plus ∂L/∂h_t ⊙ z) and one product with W_hh give ∂L/∂h_{t−1}.
- **Weight gradients** after the loop, each one product over all T·B rows: ∂W_hh = Σ_t g_tᵀ h_{t−1} (step 0 left
  out, h_0 = 0), and the table's gradient.
- **The product kernel**: where PyTorch has oneDNN (x86 builds), W_hh is reordered once per call into oneDNN's
  blocked layout (``torch.ops.mkldnn._reorder_linear_weight``) and every step's product runs through
  ``torch.ops.mkldnn._linear_pointwise`` (with the bias, or the addition of the backward step, fused) — the
  path PyTorch's own compiler takes for CPU linear layers with frozen weights. At these shapes on one thread
  it is faster than BLAS (on the 2-core development machine about 6.5 ms per step against 7.3 for BLAS on a
  transposed copy of W_hh and 8.7 for ``addmm`` on W_hh's transposed view, as ``nn.GRU`` and ``F.linear``
  call it). Elsewhere, and in double precision (which oneDNN's linear does not take), each product is a BLAS
  ``addmm`` on W_hh transposed once per call. ``BENCHBOX_GRU_PRODUCTS=blas`` (or :data:`PRODUCTS`) chooses BLAS.

The arithmetic is the GRU's; only the order of the sums differs, so outputs and gradients equal the packed
layer's to float rounding (``tests/encoders/test_char_rnn_model.py``: |Δ| ≤ 1e-6 on outputs, ≤ 1e-5 relative on the
gradients, for both kernels; ``torch.autograd.gradcheck`` in double precision).
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Callable

import torch

#: which kernel runs the recurrent products: "auto" (oneDNN for float32 when PyTorch has it, else BLAS),
#: "onednn" or "blas"; the environment variable BENCHBOX_GRU_PRODUCTS overrides it
PRODUCTS = "auto"


@lru_cache(maxsize=1)
def onednn_available() -> bool:
    """Whether this PyTorch has oneDNN's linear with reordered weights, and it agrees with BLAS on a small
    product (to float rounding)."""
    try:
        if not torch.backends.mkldnn.is_available():
            return False
        ops = torch.ops.mkldnn
        generator = torch.Generator().manual_seed(0)
        a = torch.randn(5, 7, generator=generator)
        w = torch.randn(6, 7, generator=generator)
        got = ops._linear_pointwise(a, ops._reorder_linear_weight(w, 5), None, "none", [], "")
        return bool(torch.allclose(got, a @ w.t(), rtol=1e-5, atol=1e-5))
    except Exception:  # no such op in this build, or it refuses these tensors
        return False


def _use_onednn(dtype: torch.dtype) -> bool:
    choice = os.environ.get("BENCHBOX_GRU_PRODUCTS", PRODUCTS)
    if choice not in ("auto", "onednn", "blas"):
        raise ValueError(f"BENCHBOX_GRU_PRODUCTS must be auto, onednn or blas, not {choice!r}")
    return choice != "blas" and dtype == torch.float32 and onednn_available()


def _forward_product(w_hh: torch.Tensor, b_hh: torch.Tensor, rows: int,
                     onednn: bool) -> Callable[[torch.Tensor], torch.Tensor]:
    """``h ↦ h W_hhᵀ + b_hh`` for the many states h (at most ``rows`` rows) of one call."""
    if onednn:
        ops = torch.ops.mkldnn
        packed = ops._reorder_linear_weight(w_hh.contiguous(), rows)
        return lambda h: ops._linear_pointwise(h, packed, b_hh, "none", [], "")
    transposed = w_hh.t().contiguous()
    return lambda h: torch.addmm(b_hh, h, transposed)


def _backward_product(w_hh: torch.Tensor, rows: int,
                      onednn: bool) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    """``(g, base) ↦ base + g W_hh`` for the many gate gradients g (at most ``rows`` rows) of one call."""
    if onednn:
        ops = torch.ops.mkldnn
        packed = ops._reorder_linear_weight(w_hh.t().contiguous(), rows)  # oneDNN's weight is [out, in]
        return lambda g, base: ops._linear_pointwise.binary(g, base, packed, None, "add")
    return lambda g, base: base.addmm_(g, w_hh)


def _direction_forward(ids: torch.Tensor, sizes: list[int], table: torch.Tensor, w_hh: torch.Tensor,
                       b_hh: torch.Tensor, onednn: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One direction over the time-major character ids [T, B] whose first ``sizes[t]`` rows run at step t;
    ``table`` [V, 3n] holds W_ih e_c + b_ih of every character c. Returns the outputs [T, B, n] (zero on rows
    that have ended), the coefficients [T, B, 4n] of the gate gradients (module docstring) and the update gates
    z [T, B, n] that the backward pass needs (both unset on rows that have ended)."""
    steps, batch = ids.shape
    n = w_hh.shape[1]
    out = table.new_empty(steps, batch, n)
    coef = table.new_empty(steps, batch, 4 * n)
    gates = table.new_empty(steps, batch, 2 * n)  # r, z
    one = table.new_ones(())
    recurrent = _forward_product(w_hh, b_hh, batch, onednn)
    h = out[0]
    for t in range(steps):
        rows = sizes[t]
        inputs = table.index_select(0, ids[t, :rows])  # W_ih x_t + b_ih
        hidden = recurrent(h[:rows]) if t else b_hh.expand(rows, 3 * n)  # W_hh h_{t-1} + b_hh; h_0 = 0
        rz = torch.add(inputs[:, : 2 * n], hidden[:, : 2 * n], out=gates[t, :rows]).sigmoid_()
        r, z = rz[:, :n], rz[:, n:]
        new = inputs[:, 2 * n:].addcmul_(r, hidden[:, 2 * n:]).tanh_()
        if t:
            torch.lerp(new, h[:rows], z, out=out[t, :rows])  # n + z (h_{t-1} − n)
        else:
            torch.addcmul(new, z, new, value=-1, out=out[t, :rows])
        k_r, k_z, k_nr, k_n = coef[t, :rows].split(n, dim=1)
        torch.addcmul(one, new, new, value=-1, out=k_n)
        k_n.addcmul_(k_n, z, value=-1)  # (1 − z)(1 − n²)
        torch.mul(k_n, r, out=k_nr)
        torch.mul(k_nr, hidden[:, 2 * n:], out=k_r)
        k_r.addcmul_(k_r, r, value=-1)  # (1 − z)(1 − n²)(W_hn h + b_hn) r (1 − r)
        torch.sub(out[t, :rows], new, out=k_z)  # h_t − n = z (h_{t−1} − n)
        k_z.addcmul_(k_z, z, value=-1)  # (h_{t−1} − n) z (1 − z)
        if rows < batch:
            out[t, rows:] = 0
        h = out[t]
    return out, coef, gates[..., n:]


def _direction_backward(grad_out: torch.Tensor, ids: torch.Tensor, sizes: list[int], vocab: int,
                        w_hh: torch.Tensor, out: torch.Tensor, coef: torch.Tensor, update: torch.Tensor,
                        onednn: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of one direction (of its table of W_ih e_c + b_ih, of w_hh, of b_hh) from the output gradient
    ``grad_out`` [T, B, n]."""
    steps, batch = ids.shape
    n = w_hh.shape[1]
    accumulate = _backward_product(w_hh, batch, onednn)
    gate_grads = torch.empty_like(coef)  # ∂r, ∂z, ∂n ⊙ r, ∂n of every step
    dh = grad_out[steps - 1, : sizes[steps - 1]]
    for t in reversed(range(steps)):
        rows = sizes[t]
        gates = gate_grads[t, :rows]
        torch.mul(coef[t, :rows].view(rows, 4, n), dh.unsqueeze(1), out=gates.view(rows, 4, n))
        if rows < batch:
            gate_grads[t, rows:] = 0  # ended rows take no part in the weight gradients
        if t == 0:
            break
        base = torch.addcmul(grad_out[t - 1, :rows], dh, update[t, :rows])
        dh = accumulate(gates[:, : 3 * n], base)
        if sizes[t - 1] > rows:  # captions that end at step t − 1 join (their gradient so far: their output's)
            dh = torch.cat([dh, grad_out[t - 1, rows: sizes[t - 1]]])
    recurrent = gate_grads[..., : 3 * n]
    grad_w_hh = recurrent[1:].reshape(-1, 3 * n).t() @ out[:-1].reshape(-1, n)
    grad_b_hh = recurrent.reshape(-1, 3 * n).sum(dim=0)
    per_char = coef.new_zeros(vocab, 4 * n).index_add_(0, ids.reshape(-1), gate_grads.view(steps * batch, 4 * n))
    grad_table = torch.cat([per_char[:, : 2 * n], per_char[:, 3 * n:]], dim=1)
    return grad_table, grad_w_hh, grad_b_hh


def _layout(lengths: torch.Tensor, width: int) -> tuple[list[int], torch.Tensor, torch.Tensor]:
    """For captions of ``lengths`` in a [B, width] grid: the rows running at each step when sorted longest first,
    and for each direction the [T, B] positions (b · width + s) that step t of sorted row j reads — every
    position of the grid once in all (within a caption's length reversed for the backward direction)."""
    lengths = lengths.to("cpu", torch.int64)
    order = torch.argsort(lengths, descending=True, stable=True)
    ordered = lengths[order]
    steps = int(ordered[0]) if len(ordered) else 0
    t = torch.arange(steps)[:, None]
    sizes = (ordered[None, :] > t).sum(dim=1).tolist()
    rows = order[None, :] * width
    forward = rows + t
    backward = rows + torch.where(t < ordered[None, :], ordered[None, :] - 1 - t, t)
    return sizes, forward, backward


class _BidirectionalGRU(torch.autograd.Function):
    """Both directions over a batch-first padded batch of character ids (module docstring)."""

    @staticmethod
    def forward(ctx, chars, lengths, embedding, *weights):  # noqa: D102 - documented in the module docstring
        batch, width = chars.shape
        n = weights[1].shape[1]
        if int(lengths.max()) > width or int(lengths.min()) < 1:
            raise ValueError("every caption needs a length between 1 and the width of its batch")
        sizes, forward_positions, backward_positions = _layout(lengths, width)
        onednn = _use_onednn(embedding.dtype)
        flat = chars.reshape(-1)
        result = embedding.new_empty(batch * width, 2 * n) if len(sizes) == width else \
            embedding.new_zeros(batch * width, 2 * n)
        saved = []
        for half, positions in enumerate((forward_positions, backward_positions)):
            w_ih, w_hh, b_ih, b_hh = weights[4 * half: 4 * half + 4]
            ids = flat[positions.reshape(-1)].view(len(sizes), batch)
            table = torch.addmm(b_ih, embedding, w_ih.t())
            out, coef, update = _direction_forward(ids, sizes, table, w_hh, b_hh, onednn)
            result[:, half * n: (half + 1) * n].index_copy_(0, positions.reshape(-1), out.view(-1, n))
            saved += [ids, out, coef, update]
        ctx.sizes, ctx.onednn, ctx.width = sizes, onednn, width
        ctx.save_for_backward(forward_positions, backward_positions, embedding, *weights, *saved)
        return result.view(batch, width, 2 * n)

    @staticmethod
    def backward(ctx, grad_result):  # noqa: D102
        forward_positions, backward_positions, embedding, *rest = ctx.saved_tensors
        weights, saved = rest[:8], rest[8:]
        n = weights[1].shape[1]
        steps, batch = saved[0].shape
        flat_grad = grad_result.reshape(batch * ctx.width, 2 * n)
        grad_embedding = torch.zeros_like(embedding)
        grads: list[torch.Tensor] = []
        for half, positions in enumerate((forward_positions, backward_positions)):
            ids, out, coef, update = saved[4 * half: 4 * half + 4]
            w_ih, w_hh = weights[4 * half: 4 * half + 2]
            grad_out = flat_grad[:, half * n: (half + 1) * n].index_select(0, positions.reshape(-1))
            grad_table, grad_w_hh, grad_b_hh = _direction_backward(
                grad_out.view(steps, batch, n), ids, ctx.sizes, len(embedding), w_hh, out, coef, update, ctx.onednn)
            grad_embedding.addmm_(grad_table, w_ih)
            grads += [grad_table.t() @ embedding, grad_w_hh, grad_table.sum(dim=0), grad_b_hh]
        return None, None, grad_embedding, *grads


def bidirectional_gru(chars: torch.Tensor, lengths: torch.Tensor, embedding: torch.Tensor,
                      weights: list[torch.Tensor]) -> torch.Tensor:
    """Outputs [B, T, 2n] of a one-layer bidirectional GRU on the embeddings (rows of ``embedding`` [V, d]) of the
    batch-first padded character ids ``chars`` [B, T], captions of ``lengths`` (each 1 … T), zero past each
    caption's length. ``weights``: w_ih, w_hh, b_ih, b_hh of the forward direction, then of the backward one
    (``nn.GRU``'s ``*_l0`` and ``*_l0_reverse``)."""
    if len(weights) != 8:
        raise ValueError("bidirectional_gru takes 8 weights: w_ih, w_hh, b_ih, b_hh of each direction")
    return _BidirectionalGRU.apply(chars, lengths, embedding, *weights)
