# A PyTorch program for `gpulab profile`: a transposed copy, a strided slice copy, a sum and a
# matmul on an 8192x8192 matrix (scripts/gpu/profile_vs_ncu.sh, scripts/gpu/verify.sh).
import torch
x = torch.randn(8192, 8192, device="cuda")
t = x.t().contiguous()          # transposed copy
s = x[:, ::2].contiguous()      # strided slice copy
total = x.sum()                 # reduction
y = x @ x                       # matmul
torch.cuda.synchronize()
print("checksum", float(t[1, 0] - x[0, 1]), s.shape[1], float(total) != 0, y.shape[0])
