#!/usr/bin/env python3
"""PyTorch's generated and library kernels for the outside corpus's held-out set
(tests/fixtures/outside; docs/thresholds.md, "Tuning and held-out kernels").

usage: torch_heldout.py [STEP ...]    (default: every step, in the order below)

Kernels the tuning set does not hold: cuDNN convolutions in half precision and channels-last
layout, a depthwise convolution, FlashAttention and the memory-efficient attention through
torch.nn.functional.scaled_dot_product_attention, and Triton kernels that torch.compile
generates (a fused pointwise chain, a row softmax, a residual layer norm, a column sum). Each
step runs its op, waits for it and checks the result on the host against a double-precision CPU
computation on a contiguous slice (device-to-host copies, no kernels); a wrong result exits with
status 91. A compiled function is called once before its step, so that compiling and Triton's
autotuning stay out of the step's launches; and the steps run between cudaProfilerStart and
cudaProfilerStop, so that a profiler that starts there (`gpulab profile --capture-range
cudaProfilerApi`, `ncu --profile-from-start off`) sees their launches alone, not the hundred and
more of the set-up and the autotuning, which ncu's full set takes minutes to replay.
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_ops import close  # noqa: E402  the tuning set's check, shared

inputs = {}
compiled = {}


def begin(step):
    print(f"step {step}", flush=True)


def setup():
    torch.manual_seed(1)
    inputs["images"] = torch.randn(32, 64, 112, 112, device="cuda")
    inputs["filters"] = torch.randn(128, 64, 3, 3, device="cuda")
    inputs["depthwise"] = torch.randn(64, 1, 5, 5, device="cuda")
    inputs["q"] = torch.randn(8, 16, 4096, 64, device="cuda", dtype=torch.float16)
    inputs["k"] = torch.randn(8, 16, 4096, 64, device="cuda", dtype=torch.float16)
    inputs["v"] = torch.randn(8, 16, 4096, 64, device="cuda", dtype=torch.float16)
    inputs["x"] = torch.randn(8192, 8192, device="cuda")
    inputs["residual"] = torch.randn(8192, 8192, device="cuda")
    inputs["bias"] = torch.randn(8192, device="cuda")
    inputs["weight"] = torch.randn(8192, device="cuda")
    torch.cuda.synchronize()
    for name in list(inputs):
        inputs[name + "_cpu"] = inputs[name].cpu()

    # The compiled functions, each called once here: their Triton kernels are generated, tuned
    # and loaded before the steps that time nothing but their launches.
    compiled["gelu_bias"] = torch.compile(lambda x, b: F.gelu(x + b) * 0.5)
    compiled["softmax"] = torch.compile(lambda x: torch.softmax(x * 0.125, dim=1))
    compiled["residual_norm"] = torch.compile(
        lambda x, r, w, b: F.layer_norm(x + r, (x.shape[1],)) * w + b)
    compiled["column_sum"] = torch.compile(lambda x: (x * x).sum(dim=0))
    x, r, b, w = inputs["x"], inputs["residual"], inputs["bias"], inputs["weight"]
    compiled["gelu_bias"](x, b)
    compiled["softmax"](x)
    compiled["residual_norm"](x, r, w, b)
    compiled["column_sum"](x)
    torch.cuda.synchronize()


def conv2d(step, dtype, channels_last, tolerance):
    torch.backends.cudnn.benchmark = False
    images = inputs["images"].to(dtype)
    filters = inputs["filters"].to(dtype)
    if channels_last:
        images = images.contiguous(memory_format=torch.channels_last)
        filters = filters.contiguous(memory_format=torch.channels_last)
    torch.cuda.synchronize()
    begin(step)
    out = F.conv2d(images, filters, padding=1)
    torch.cuda.synchronize()
    first = out[:1].contiguous().cpu().float()
    images_cpu = inputs["images_cpu"][:1].to(dtype).double()
    filters_cpu = inputs["filters_cpu"].to(dtype).double()
    expected = F.conv2d(images_cpu, filters_cpu, padding=1)
    magnitude = F.conv2d(images_cpu.abs(), filters_cpu.abs(), padding=1)
    close(step, first, expected, magnitude, tolerance)


def conv2d_fp16_channels_last():
    conv2d("conv2d_fp16_channels_last", torch.float16, True, 2e-3)


def conv2d_bf16():
    conv2d("conv2d_bf16", torch.bfloat16, False, 1e-2)


def conv2d_depthwise():
    step = "conv2d_depthwise"
    begin(step)
    out = F.conv2d(inputs["images"], inputs["depthwise"], padding=2, groups=64)
    torch.cuda.synchronize()
    images = inputs["images_cpu"][:1].double()
    filters = inputs["depthwise_cpu"].double()
    expected = F.conv2d(images, filters, padding=2, groups=64)
    magnitude = F.conv2d(images.abs(), filters.abs(), padding=2, groups=64)
    close(step, out[:1].cpu(), expected, magnitude, 1e-4)


def attention(step, backend, causal):
    from torch.nn.attention import sdpa_kernel
    q, k, v = inputs["q"], inputs["k"], inputs["v"]
    begin(step)
    with sdpa_kernel(backend):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.cuda.synchronize()
    # The first head of the first batch, in double on the CPU.
    qc, kc, vc = (inputs[n + "_cpu"][0, 0].double() for n in ("q", "k", "v"))
    scores = (qc @ kc.T) / 8.0
    if causal:
        scores = scores.masked_fill(torch.ones_like(scores).triu(1).bool(), float("-inf"))
    weights = torch.softmax(scores, dim=1)
    expected = weights @ vc
    close(step, out[0, 0].cpu(), expected, weights @ vc.abs(), 5e-3)


def attention_flash():
    from torch.nn.attention import SDPBackend
    attention("attention_flash", SDPBackend.FLASH_ATTENTION, False)


def attention_flash_causal():
    from torch.nn.attention import SDPBackend
    attention("attention_flash_causal", SDPBackend.FLASH_ATTENTION, True)


def attention_efficient():
    from torch.nn.attention import SDPBackend
    attention("attention_efficient", SDPBackend.EFFICIENT_ATTENTION, False)


def compiled_gelu_bias():
    step = "compiled_gelu_bias"
    begin(step)
    out = compiled["gelu_bias"](inputs["x"], inputs["bias"])
    torch.cuda.synchronize()
    x = inputs["x_cpu"][:64].double() + inputs["bias_cpu"].double()
    expected = F.gelu(x) * 0.5
    close(step, out[:64].cpu(), expected, expected.abs() + 1, 1e-5)


def compiled_softmax():
    step = "compiled_softmax"
    begin(step)
    out = compiled["softmax"](inputs["x"])
    torch.cuda.synchronize()
    expected = torch.softmax(inputs["x_cpu"][:64].double() * 0.125, dim=1)
    close(step, out[:64].cpu(), expected, expected, 1e-4)


def compiled_residual_norm():
    step = "compiled_residual_norm"
    begin(step)
    out = compiled["residual_norm"](inputs["x"], inputs["residual"], inputs["weight"],
                                    inputs["bias"])
    torch.cuda.synchronize()
    h = inputs["x_cpu"][:64].double() + inputs["residual_cpu"][:64].double()
    expected = F.layer_norm(h, (h.shape[1],)) * inputs["weight_cpu"].double() + \
        inputs["bias_cpu"].double()
    close(step, out[:64].cpu(), expected, expected.abs() + 1, 1e-4)


def compiled_column_sum():
    step = "compiled_column_sum"
    begin(step)
    out = compiled["column_sum"](inputs["x"])
    torch.cuda.synchronize()
    x = inputs["x_cpu"].double()
    expected = (x * x).sum(dim=0)
    close(step, out.cpu(), expected, expected, 1e-5)


STEPS = [conv2d_fp16_channels_last, conv2d_bf16, conv2d_depthwise, attention_flash,
         attention_flash_causal, attention_efficient, compiled_gelu_bias, compiled_softmax,
         compiled_residual_norm, compiled_column_sum]


def main(argv):
    by_name = {s.__name__: s for s in STEPS}
    unknown = [name for name in argv if name not in by_name]
    if unknown:
        print(f"unknown step {unknown[0]}; the steps: {' '.join(by_name)}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 90
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", flush=True)
    begin("setup")
    setup()
    torch.cuda.profiler.start()
    for step in [by_name[name] for name in argv] or STEPS:
        step()
    torch.cuda.profiler.stop()
    print("all steps passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
