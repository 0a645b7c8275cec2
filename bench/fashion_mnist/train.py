# Twin of train.ms in PyTorch: the same model, initialisation scheme,
# optimiser, batch size and number of steps per epoch; the data read
# from the same IDX files and shuffled with a seeded permutation per
# epoch (the orders differ from Mist's, the work does not); batches cut
# from tensors held in memory (the fastest way to feed PyTorch, faster
# than a DataLoader).  Threads: MIST_NUM_THREADS, else one per core;
# one inter-op thread.
#
#   python3 train.py MODEL [B] [EPOCHS]      prints "epoch_s S" and "check C"
import gzip
import os
import struct
import sys
import time

import torch
import torch.nn.functional as F

MODEL = sys.argv[1]
B = int(sys.argv[2]) if len(sys.argv) > 2 else 128
EPOCHS = int(sys.argv[3]) if len(sys.argv) > 3 else 1
threads = int(os.environ.get("MIST_NUM_THREADS", "0")) or os.cpu_count()
torch.set_num_threads(threads)
torch.set_num_interop_threads(1)
D = "/usr/share/datasets/fashion-mnist"


def idx(path):
    with gzip.open(path) as f:
        b = f.read()
    ndim = b[3]
    dims = struct.unpack(">" + "I" * ndim, b[4:4 + 4 * ndim])
    return torch.frombuffer(bytearray(b[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


images = idx(D + "/train-images-idx3-ubyte.gz")
labels = idx(D + "/train-labels-idx1-ubyte.gz").long()
torch.manual_seed(0)

if MODEL == "mlp":
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                torch.nn.ReLU(), torch.nn.Linear(256, 10))
else:
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Flatten(), torch.nn.Linear(64 * 7 * 7, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)


def batches(epoch):
    g = torch.Generator().manual_seed(epoch)
    perm = torch.randperm(len(labels), generator=g)
    for i in range(0, len(perm), B):
        j = perm[i:i + B]
        x = images[j].float() * (1.0 / 255.0)
        x = x.reshape(len(j), 784) if MODEL == "mlp" else x.reshape(len(j), 1, 28, 28)
        yield x, labels[j]


def step(x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


for n, (x, y) in enumerate(batches(0)):
    step(x, y)
    if n == 19:
        break

best = float("inf")
check = 0.0
for epoch in range(1, EPOCHS + 1):
    t0 = time.perf_counter()
    total = 0.0
    steps = 0
    for x, y in batches(epoch):
        total += step(x, y).item()
        steps += 1
    best = min(best, time.perf_counter() - t0)
    check = total / steps
print(f"epoch_s {best:.3f}")
print(f"check {check:.4f}")
