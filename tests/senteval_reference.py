"""A reference implementation of SentEval's probes, structured as SentEval's own code, for agreement checks.

SentEval is not on PyPI and its code asserts a GPU, so benchbox's fast probes are checked against this
straightforward rewrite of ``senteval/sts.py`` (the STS12–16 loop), ``senteval/tools/relatedness.py`` (RelatednessPytorch), ``tools/classifier.py``
(MLP with nhid = 0, i.e. the PyTorch logistic regression) and ``tools/validation.py`` (InnerKFold, KFold and
Split classifiers), running on CPU: global seeding per model, ``nn.Sequential`` models, torch's ``Adam``
and loss objects with autograd, one ``np.random.permutation`` per epoch (fed to a ``DataLoader`` for the
relatedness baseline), evaluation in batches of 64. Used by ``benchmarks/bench_semantic_transfer.py`` and
the ``realdata`` agreement tests; not part of the package.
"""

from __future__ import annotations

import copy
import io
from pathlib import Path

import numpy as np
import torch
from scipy.stats import pearsonr, spearmanr
from sklearn.model_selection import StratifiedKFold
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from benchbox.tasks.relatedness import encode_labels, senteval_order
from benchbox.tasks.senteval_probe import pair_features

PYTORCH_REGS = [10.0**t for t in range(-5, -1)]


class ReferenceRelatedness:
    """RelatednessPytorch on CPU; each epoch's permutation feeds a DataLoader (``dataloader=True``, the
    straightforward loop the benchmark compares with) or is sliced into index batches as SentEval does."""

    def __init__(self, train: dict, valid: dict, test: dict, devscores, seed: int = 1111,
                 dataloader: bool = True) -> None:
        np.random.seed(seed)
        self.dataloader = dataloader
        torch.manual_seed(seed)
        self.train, self.valid, self.test, self.devscores = train, valid, test, devscores
        self.batch_size, self.maxepoch = 64, 1000
        self.model = nn.Sequential(nn.Linear(train["X"].shape[1], 5), nn.Softmax(dim=1))
        self.loss_fn = nn.MSELoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), weight_decay=0.0)

    def run(self) -> tuple[float, np.ndarray, np.ndarray]:
        self.nepoch, bestpr, early_stop_count, stop_train = 0, -1, 0, False
        r = np.arange(1, 6)
        train_x, train_y = torch.from_numpy(self.train["X"]), torch.from_numpy(self.train["y"])
        dev_x, test_x = torch.from_numpy(self.valid["X"]), torch.from_numpy(self.test["X"])
        while not stop_train and self.nepoch <= self.maxepoch:
            self.trainepoch(train_x, train_y, nepoches=50)
            yhat = np.dot(self.predict_proba(dev_x), r)
            pr = pearsonr(yhat, self.devscores)[0]
            if pr > bestpr:
                bestpr = pr
                bestmodel = copy.deepcopy(self.model)
            else:
                if early_stop_count >= 3:
                    stop_train = True
                early_stop_count += 1
        self.model = bestmodel
        return bestpr, np.dot(self.predict_proba(dev_x), r), np.dot(self.predict_proba(test_x), r)

    def trainepoch(self, x: torch.Tensor, y: torch.Tensor, nepoches: int = 1) -> None:
        self.model.train()
        dataset = TensorDataset(x, y)
        for _ in range(nepoches):
            permutation = np.random.permutation(len(x))
            if self.dataloader:
                batches = DataLoader(dataset, batch_size=self.batch_size, sampler=permutation.tolist())
            else:  # SentEval's own indexing
                batches = (dataset[torch.from_numpy(permutation[i:i + self.batch_size])]
                           for i in range(0, len(x), self.batch_size))
            for xbatch, ybatch in batches:
                loss = self.loss_fn(self.model(xbatch), ybatch)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        self.nepoch += nepoches

    def predict_proba(self, x: torch.Tensor) -> np.ndarray:
        self.model.eval()
        with torch.no_grad():
            return np.concatenate([self.model(x[i:i + 64]).numpy() for i in range(0, len(x), 64)])


class ReferenceLogReg:
    """SentEval's ``MLP`` with nhid = 0 (literature setting: adam, batch 64, tenacity 5, epoch_size 4,
    max_epoch 200; SNLI: epoch_size 1, max_epoch 15), on CPU, batches taken by ``index_select`` on each
    epoch's permutation as SentEval does."""

    def __init__(self, inputdim: int, nclasses: int, l2reg: float, seed: int = 1111, epoch_size: int = 4,
                 max_epoch: int = 200) -> None:
        np.random.seed(seed)
        torch.manual_seed(seed)
        self.batch_size, self.tenacity, self.epoch_size, self.max_epoch = 64, 5, epoch_size, max_epoch
        self.model = nn.Sequential(nn.Linear(inputdim, nclasses))
        self.loss_fn = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.Adam(self.model.parameters())
        self.optimizer.param_groups[0]["weight_decay"] = l2reg

    def fit(self, x, y, validation_data=None, validation_split=None) -> float:
        if validation_data is not None:
            train_x, train_y, (dev_x, dev_y) = x, y, validation_data
        else:
            permutation = np.random.permutation(len(x))
            cut = int(validation_split * len(x))
            train_x, train_y = x[permutation[cut:]], y[permutation[cut:]]
            dev_x, dev_y = x[permutation[:cut]], y[permutation[:cut]]
        train_x, train_y = torch.FloatTensor(train_x), torch.LongTensor(train_y)
        self.nepoch, best, stop, count = 0, -1, False, 0
        while not stop and self.nepoch <= self.max_epoch:
            self.trainepoch(train_x, train_y)
            accuracy = self.score(dev_x, dev_y)
            if accuracy > best:
                best, bestmodel = accuracy, copy.deepcopy(self.model)
            else:
                if count >= self.tenacity:
                    stop = True
                count += 1
        self.model = bestmodel
        return best

    def trainepoch(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.model.train()
        for _ in range(self.epoch_size):
            permutation = np.random.permutation(len(x))
            for i in range(0, len(x), self.batch_size):
                idx = torch.LongTensor(permutation[i:i + self.batch_size])
                loss = self.loss_fn(self.model(x.index_select(0, idx)), y.index_select(0, idx))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        self.nepoch += self.epoch_size

    def predict(self, x) -> np.ndarray:
        self.model.eval()
        x = torch.FloatTensor(x)
        with torch.no_grad():
            return np.concatenate([self.model(x[i:i + 64]).argmax(1).numpy() for i in range(0, len(x), 64)])

    def score(self, x, y) -> float:
        return float(np.mean(self.predict(x) == np.asarray(y)))


def inner_kfold(x, y, nclasses: int, seed: int = 1111, k: int = 10) -> tuple[float, float]:
    """InnerKFoldClassifier.run (usepytorch): (dev accuracy, test accuracy), in percent."""
    skf = StratifiedKFold(n_splits=k, shuffle=True, random_state=1111)
    inner = StratifiedKFold(n_splits=k, shuffle=True, random_state=1111)
    dev, test = [], []
    for train_idx, test_idx in skf.split(x, y):
        x_train, x_test, y_train, y_test = x[train_idx], x[test_idx], y[train_idx], y[test_idx]
        scores = []
        for reg in PYTORCH_REGS:
            regscores = []
            for a, b in inner.split(x_train, y_train):
                clf = ReferenceLogReg(x.shape[1], nclasses, reg, seed)
                clf.fit(x_train[a], y_train[a], validation_data=(x_train[b], y_train[b]))
                regscores.append(clf.score(x_train[b], y_train[b]))
            scores.append(round(100 * np.mean(regscores), 2))
        dev.append(np.max(scores))
        clf = ReferenceLogReg(x.shape[1], nclasses, PYTORCH_REGS[int(np.argmax(scores))], seed)
        clf.fit(x_train, y_train, validation_split=0.05)
        test.append(round(100 * clf.score(x_test, y_test), 2))
    return round(float(np.mean(dev)), 2), round(float(np.mean(test)), 2)


def kfold(train_x, train_y, test_x, test_y, nclasses: int, seed: int = 1111, k: int = 10):
    """KFoldClassifier.run (usepytorch): (dev accuracy, test accuracy, test predictions)."""
    skf = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    scores = []
    for reg in PYTORCH_REGS:
        scan = []
        for a, b in skf.split(train_x, train_y):
            clf = ReferenceLogReg(train_x.shape[1], nclasses, reg, seed)
            clf.fit(train_x[a], train_y[a], validation_data=(train_x[b], train_y[b]))
            scan.append(clf.score(train_x[b], train_y[b]))
        scores.append(round(100 * np.mean(scan), 2))
    clf = ReferenceLogReg(train_x.shape[1], nclasses, PYTORCH_REGS[int(np.argmax(scores))], seed)
    clf.fit(train_x, train_y, validation_split=0.05)
    return float(np.max(scores)), round(100 * clf.score(test_x, test_y), 2), clf.predict(test_x)


def split(train, valid, test, nclasses: int, seed: int = 1111, noreg: bool = False,
          **schedule: int) -> tuple[float, float]:
    """SplitClassifier.run (usepytorch): (dev accuracy, test accuracy); each argument is (x, y); ``noreg``
    and ``schedule`` (``epoch_size``, ``max_epoch``) as SNLIEval sets them."""
    regs = [0.0] if noreg else PYTORCH_REGS
    scores = []
    for reg in regs:
        clf = ReferenceLogReg(train[0].shape[1], nclasses, reg, seed, **schedule)
        clf.fit(*train, validation_data=valid)
        scores.append(round(100 * clf.score(*valid), 2))
    clf = ReferenceLogReg(train[0].shape[1], nclasses, regs[int(np.argmax(scores))], seed, **schedule)
    clf.fit(*train, validation_data=valid)
    return float(np.max(scores)), round(100 * clf.score(*test), 2)


def relatedness_features(encoder, data, loader) -> dict:
    """Per split (train, dev, test): SentEval's pair features [|u−v|, u⊙v] and gold scores, in SentEval's order."""
    out = {}
    for split in ("train", "dev", "test"):
        pairs = loader(data, split)
        order = senteval_order(pairs)
        a = encoder.encode([pairs.sentences1[i] for i in order])
        b = encoder.encode([pairs.sentences2[i] for i in order])
        out[split] = (pair_features(a, b), np.asarray(pairs.scores)[order])
    return out


def run_relatedness(features: dict, dataloader: bool) -> tuple[float, np.ndarray, np.ndarray]:
    """:class:`ReferenceRelatedness` on :func:`relatedness_features`: (dev Pearson, dev ŷ, test ŷ)."""
    return ReferenceRelatedness({"X": features["train"][0], "y": encode_labels(features["train"][1])},
                                {"X": features["dev"][0]}, {"X": features["test"][0]}, features["dev"][1],
                                dataloader=dataloader).run()


def senteval_sts(encode, folder: Path, datasets: tuple[str, ...]) -> dict[str, tuple[float, float, int]]:
    """SentEval's STS loop (``senteval/sts.py``), restated: read with ``splitlines`` and split on tabs,
    drop empty gold lines, tokenise with ``str.split``, sort by length, batch, cosine with nan_to_num."""
    results = {}
    for dataset in datasets:
        lines = io.open(folder / f"STS.input.{dataset}.txt", encoding="utf8").read().splitlines()
        sent1, sent2 = zip(*[line.split("\t") for line in lines])
        raw_scores = np.array(io.open(folder / f"STS.gs.{dataset}.txt", encoding="utf8").read().splitlines())
        keep = raw_scores != ""
        gs_scores = [float(x) for x in raw_scores[keep]]
        sent1 = [s.split() for s, k in zip(sent1, keep) if k]
        sent2 = [s.split() for s, k in zip(sent2, keep) if k]
        data = sorted(zip(sent1, sent2, gs_scores), key=lambda z: (len(z[0]), len(z[1]), z[2]))
        sent1, sent2, gs_scores = map(list, zip(*data))
        sys_scores = []
        for i in range(0, len(gs_scores), 128):
            enc1 = encode([" ".join(s) for s in sent1[i : i + 128]])
            enc2 = encode([" ".join(s) for s in sent2[i : i + 128]])
            for u, v in zip(enc1, enc2):
                u, v = np.nan_to_num(u), np.nan_to_num(v)
                with np.errstate(invalid="ignore", divide="ignore"):
                    sys_scores.append(np.nan_to_num(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v))))
        results[dataset] = (pearsonr(sys_scores, gs_scores)[0], spearmanr(sys_scores, gs_scores)[0], len(gs_scores))
    return results
