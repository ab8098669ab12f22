# A PyTorch training loop marked with NVTX ranges, for `gpulab profile --nvtx-include`
# (scripts/gpu/verify.sh, step torch-nvtx): two warm-up steps outside any range, then three steps
# of a two-layer network, each inside "step" with "forward" and "backward" inside it. Prints the
# loss of the last step, which must be finite.
import math

import torch

torch.manual_seed(7)
model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
                            torch.nn.Linear(2048, 1024)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(512, 1024, device="cuda")
target = torch.randn(512, 1024, device="cuda")


def train_step():
    with torch.cuda.nvtx.range("forward"):
        loss = torch.nn.functional.mse_loss(model(x), target)
    with torch.cuda.nvtx.range("backward"):
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss


for _ in range(2):  # warm-up: outside every range
    train_step()
for _ in range(3):
    with torch.cuda.nvtx.range("step"):
        loss = train_step()
torch.cuda.synchronize()
value = float(loss)
print("loss", value)
raise SystemExit(0 if math.isfinite(value) else 1)
