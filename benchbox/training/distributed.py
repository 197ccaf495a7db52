"""The distributed wrapper of the char-RNN training loop: rank, world size, device and process group under
``torchrun`` (WORLD_SIZE > 1), and DistributedDataParallel around the model (gloo on CPU, nccl on GPU).

Each global minibatch of the single-process plan is split between the ranks (rank r takes rows r, r + W, ...);
the caption and image embeddings are all-gathered with autograd (``torch.distributed.nn.all_gather``) so that
every rank computes the loss over the whole global batch, with all in-batch negatives, exactly as one process
would; DDP averages the gradients. A ``DistributedSampler`` would shard whole examples per rank and so shrink
the negatives per loss; this scheme gives the single-process result up to floating-point summation order.
Rank 0 writes all files. Single-process, every method is the identity or a no-op.
"""

from __future__ import annotations

import os
import warnings
from datetime import timedelta
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from benchbox.encoders.char_rnn_net import CharRNNNet


class TrainModule(torch.nn.Module):
    """One forward for DDP: embeddings of the captions, of the visual side, of the partner captions and of the
    text batch (the textual term's consecutive corpus sentences, through the same caption encoder), and the
    visual vectors themselves. With ``--visual attention`` the visual input is the clips' frames [B, F, D] with
    their frame counts and the captions' fixed queries, and the visual vectors are the net's attention over
    them (:mod:`benchbox.encoders.frame_attention`), so that its projection is trained (and all-reduced) with
    the rest. With the textual term alone there is no caption batch (``chars`` None): only the text batch is
    encoded."""

    def __init__(self, net: CharRNNNet) -> None:
        super().__init__()
        self.net = net

    def forward(
        self,
        chars: torch.Tensor | None,
        lengths: torch.Tensor | None,
        visual: torch.Tensor | None,
        partner_chars: torch.Tensor | None,
        partner_lengths: torch.Tensor | None,
        text_chars: torch.Tensor | None = None,
        text_lengths: torch.Tensor | None = None,
        frame_counts: torch.Tensor | None = None,
        queries: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None, torch.Tensor | None,
               torch.Tensor | None]:
        captions = self.net.caption(chars, lengths) if chars is not None else None
        if queries is not None:
            assert visual is not None and frame_counts is not None and self.net.frame_attention is not None
            visual = self.net.frame_attention(visual, frame_counts, queries)
        images = self.net.image(visual) if visual is not None and self.net.image is not None else None
        partners = self.net.caption(partner_chars, partner_lengths) if partner_chars is not None else None
        texts = self.net.caption(text_chars, text_lengths) if text_chars is not None else None
        return captions, images, partners, texts, visual


class Distributed:
    """Rank, world size and device; initialises the process group under torchrun."""

    def __init__(self) -> None:
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        use_cuda = torch.cuda.is_available()
        self.device = torch.device(f"cuda:{local_rank}" if use_cuda else "cpu")
        if use_cuda:
            torch.cuda.set_device(self.device)
        self.owns_group = False
        if self.world > 1 and not dist.is_initialized():
            # rank 0 alone scores snapshots (dev retrieval, semantic tasks) while the others wait
            dist.init_process_group("nccl" if use_cuda else "gloo", timeout=timedelta(hours=4))
            self.owns_group = True

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def wrap(self, net: CharRNNNet) -> torch.nn.Module:
        """The module the loop calls: :class:`TrainModule`, inside DistributedDataParallel when distributed."""
        model: torch.nn.Module = TrainModule(net)
        if self.world > 1:
            from torch.nn.parallel import DistributedDataParallel

            model = DistributedDataParallel(model, device_ids=[self.device] if self.device.type == "cuda" else None)
        return model

    def share(self, rows: Any) -> Any:
        """This rank's share of the rows of a global minibatch (rows r, r + W, ...)."""
        return rows[self.rank :: self.world]

    def gathered(self, rows: Any) -> Any:
        """The rows of a global minibatch in the order :meth:`gather` returns their embeddings."""
        return np.concatenate([rows[rank :: self.world] for rank in range(self.world)])

    def barrier(self) -> None:
        if self.world > 1:
            dist.barrier()

    def broadcast(self, value: Any) -> Any:
        if self.world == 1:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def any(self, flag: bool) -> bool:
        if self.world == 1:
            return flag
        t = torch.tensor([int(flag)], device=self.device)
        dist.all_reduce(t)
        return bool(t.item())

    def gather(self, x: torch.Tensor | None) -> torch.Tensor | None:
        """Concatenate every rank's rows, differentiably."""
        if x is None or self.world == 1:
            return x
        from torch.distributed.nn.functional import all_gather

        with warnings.catch_warnings():  # deprecated for a private API; still the public autograd all-gather
            warnings.simplefilter("ignore", FutureWarning)
            return torch.cat(all_gather(x), dim=0)

    def close(self) -> None:
        if self.owns_group:
            dist.destroy_process_group()
