#!/usr/bin/env python3
"""PyTorch's own kernels for the outside corpus (tests/fixtures/outside).

usage: torch_ops.py [STEP ...]    (default: every step, in the order below)

Each step runs one op on tensors large enough that its kernels take tens of microseconds or more
on an H200 (8192 x 8192 fp32: 256 MiB), waits for it (torch.cuda.synchronize) and checks the
result on the host; a wrong result exits with status 91, so a report of a broken run cannot enter
the corpus. The inputs are made on the GPU first, with a fixed seed (PyTorch's random kernels
are part of what is recorded). The checks compare copies of contiguous tensors (device-to-host
copies, no kernels) with PyTorch's CPU ops, so that every kernel of the run belongs to a step's
op. tests/fixtures/outside/LABELING.md lists the kernels each step is expected to launch.
"""
import sys

import torch
import torch.nn.functional as F

N = 8192  # rows and columns of the elementwise, copy, reduction and softmax inputs
M = 4096  # the matrix products' size: 137 GFLOP each
GATHERED = 1 << 24  # elements gathered, and elements added into the contended bins
BINS = 64

inputs = {}


def fail(step, what):
    print(f"step {step}: wrong result: {what}", file=sys.stderr)
    sys.exit(91)


def close(step, got, expected, magnitude, tolerance):
    """got and expected agree within tolerance x magnitude, element by element (float64)."""
    error = (got.double() - expected.double()).abs()
    if not bool((error <= tolerance * magnitude.double() + 1e-30).all()):
        fail(step, f"largest error {float(error.max()):.3g} beyond {tolerance:g} of the magnitude")


def setup():
    torch.manual_seed(0)
    x = torch.randn(N, N, device="cuda")
    y = torch.randn(N, N, device="cuda")
    a = torch.randn(M, M, device="cuda")
    b = torch.randn(M, M, device="cuda")
    row = torch.randn(N, device="cuda")
    column = torch.randn(N, 1, device="cuda")
    positions = torch.randint(0, N * N, (GATHERED,), device="cuda")
    bins = torch.randint(0, BINS, (GATHERED,), device="cuda")
    images = torch.randn(16, 64, 112, 112, device="cuda")
    filters = torch.randn(128, 64, 3, 3, device="cuda")
    torch.cuda.synchronize()
    names = ("x", "y", "a", "b", "row", "column", "positions", "bins", "images", "filters")
    for name, t in zip(names, (x, y, a, b, row, column, positions, bins, images, filters)):
        inputs[name] = t
        inputs[name + "_cpu"] = t.cpu()
    if float(inputs["x_cpu"].std()) < 0.9:
        fail("setup", "randn gave no standard normal values")


def transpose_contiguous():
    t = inputs["x"].t().contiguous()
    torch.cuda.synchronize()
    if not torch.equal(t.cpu(), inputs["x_cpu"].t()):
        fail("transpose_contiguous", "not the transpose")


def strided_slice_copy():
    s = inputs["x"][:, ::2].contiguous()
    torch.cuda.synchronize()
    if not torch.equal(s.cpu(), inputs["x_cpu"][:, ::2]):
        fail("strided_slice_copy", "not every second column")


def row_slice_copy():
    s = inputs["x"][::2].contiguous()
    torch.cuda.synchronize()
    if not torch.equal(s.cpu(), inputs["x_cpu"][::2]):
        fail("row_slice_copy", "not every second row")


def sum_all():
    total = inputs["x"].sum()
    torch.cuda.synchronize()
    x = inputs["x_cpu"].double()
    close("sum_all", total.cpu(), x.sum(), x.abs().sum(), 1e-5)


def sum_rows():
    sums = inputs["x"].sum(dim=1)
    torch.cuda.synchronize()
    x = inputs["x_cpu"].double()
    close("sum_rows", sums.cpu(), x.sum(dim=1), x.abs().sum(dim=1), 1e-5)


def sum_columns():
    sums = inputs["x"].sum(dim=0)
    torch.cuda.synchronize()
    x = inputs["x_cpu"].double()
    close("sum_columns", sums.cpu(), x.sum(dim=0), x.abs().sum(dim=0), 1e-5)


def softmax_rows():
    p = torch.softmax(inputs["x"], dim=1)
    torch.cuda.synchronize()
    expected = torch.softmax(inputs["x_cpu"][:64].double(), dim=1)
    close("softmax_rows", p[:64].cpu(), expected, expected, 1e-4)


def softmax_short_rows():
    # Rows of 256: PyTorch's warp-per-row softmax, where rows of 8192 take a block each.
    p = torch.softmax(inputs["x"].view(-1, 256), dim=1)
    torch.cuda.synchronize()
    expected = torch.softmax(inputs["x_cpu"].view(-1, 256)[:4096].double(), dim=1)
    close("softmax_short_rows", p[:4096].cpu(), expected, expected, 1e-4)


def matmul(step, precision, tolerance):
    torch.set_float32_matmul_precision(precision)
    c = inputs["a"] @ inputs["b"]
    torch.cuda.synchronize()
    torch.set_float32_matmul_precision("highest")
    a, b = inputs["a_cpu"][:64].double(), inputs["b_cpu"].double()
    close(step, c[:64].cpu(), a @ b, a.abs() @ b.abs(), tolerance)


def matmul_fp32():
    # "highest": fp32 inputs and accumulation, no TF32.
    matmul("matmul_fp32", "highest", 1e-5)


def matmul_tf32():
    # "high": TF32 tensor cores (inputs rounded to 10-bit mantissas).
    matmul("matmul_tf32", "high", 1e-3)


def add_broadcast_row():
    s = inputs["x"] + inputs["row"]
    torch.cuda.synchronize()
    if not torch.equal(s.cpu(), inputs["x_cpu"] + inputs["row_cpu"]):
        fail("add_broadcast_row", "differs from the CPU's sum")


def mul_broadcast_column():
    s = inputs["x"] * inputs["column"]
    torch.cuda.synchronize()
    if not torch.equal(s.cpu(), inputs["x_cpu"] * inputs["column_cpu"]):
        fail("mul_broadcast_column", "differs from the CPU's product")


def add_contiguous():
    s = inputs["x"] + inputs["y"]
    torch.cuda.synchronize()
    if not torch.equal(s.cpu(), inputs["x_cpu"] + inputs["y_cpu"]):
        fail("add_contiguous", "differs from the CPU's sum")


def gather_random():
    g = inputs["x"].view(-1)[inputs["positions"]]
    torch.cuda.synchronize()
    if not torch.equal(g.cpu(), inputs["x_cpu"].view(-1)[inputs["positions_cpu"]]):
        fail("gather_random", "differs from the CPU's gather")


def index_add_contended():
    # 2^24 values added into 64 bins: every bin receives 2^18 atomic adds.
    src = inputs["x"].view(-1)[:GATHERED]
    sums = torch.zeros(BINS, device="cuda").index_add_(0, inputs["bins"], src)
    torch.cuda.synchronize()
    src_cpu = inputs["x_cpu"].view(-1)[:GATHERED].double()
    bins_cpu = inputs["bins_cpu"]
    expected = torch.zeros(BINS, dtype=torch.float64).index_add_(0, bins_cpu, src_cpu)
    magnitude = torch.zeros(BINS, dtype=torch.float64).index_add_(0, bins_cpu, src_cpu.abs())
    close("index_add_contended", sums.cpu(), expected, magnitude, 1e-4)


def layer_norm():
    out = F.layer_norm(inputs["x"], (N,))
    torch.cuda.synchronize()
    expected = F.layer_norm(inputs["x_cpu"][:64].double(), (N,))
    close("layer_norm", out[:64].cpu(), expected, expected.abs() + 1, 1e-4)


def conv2d():
    # cuDNN, as PyTorch calls it by default: TF32 allowed for convolutions, no autotuning.
    torch.backends.cudnn.allow_tf32 = True
    torch.backends.cudnn.benchmark = False
    out = F.conv2d(inputs["images"], inputs["filters"], padding=1)
    torch.cuda.synchronize()
    images, filters = inputs["images_cpu"][:1].double(), inputs["filters_cpu"].double()
    expected = F.conv2d(images, filters, padding=1)
    magnitude = F.conv2d(images.abs(), filters.abs(), padding=1)
    close("conv2d", out[:1].cpu(), expected, magnitude, 1e-3)


STEPS = [transpose_contiguous, strided_slice_copy, row_slice_copy, sum_all, sum_rows,
         sum_columns, softmax_rows, softmax_short_rows, matmul_fp32, matmul_tf32,
         add_broadcast_row, mul_broadcast_column, add_contiguous, gather_random,
         index_add_contended, layer_norm, conv2d]


def main():
    by_name = {s.__name__: s for s in STEPS}
    unknown = [name for name in sys.argv[1:] if name not in by_name]
    if unknown:
        print(f"unknown step {unknown[0]}; the steps: {' '.join(by_name)}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 90
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", flush=True)
    chosen = [by_name[name] for name in sys.argv[1:]] or STEPS
    for s in [setup] + chosen:
        print(f"step {s.__name__}", flush=True)
        s()
    print("all steps passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
