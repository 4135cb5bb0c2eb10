"""What a CUDA graph cannot record, caught on any device: host copies and host reads.

A CUDA graph records kernels; while it records, PyTorch refuses a copy from host memory
(torch.tensor([...], device="cuda"), torch.as_tensor(3, device="cuda")) and anything that
makes the host wait for a value (.item(), .tolist(), bool(t), a boolean-mask index, whose
output size the host must read).  Those only fail on a GPU, which CI does not have, so
`HostTraffic` watches every torch call at the Python level (a TorchFunctionMode) and lists
the ones that would copy from or read back to the host there, whatever the device they run
on: the recorded step runs under it on a CPU in tests/test_capture.py.
"""

import torch
from torch.overrides import TorchFunctionMode

T = torch.Tensor
# calls that read a tensor's values on the host (on a GPU: a copy back and a wait)
HOST_READS = {T.item, T.tolist, T.numpy, T.cpu, T.__bool__, T.__int__, T.__float__, T.__index__, T.__format__,
              T.__repr__, T.__array__, T.nonzero, torch.nonzero, T.masked_select, torch.masked_select,
              T.unique, torch.unique, T.unique_consecutive, torch.unique_consecutive, torch.repeat_interleave,
              T.repeat_interleave, torch.argwhere, T.argwhere}
# calls that make a tensor from host data (on a GPU: a copy from the host)
HOST_DATA = {torch.tensor, torch.as_tensor, torch.asarray, torch.from_numpy}
INDEXING = {T.__getitem__, T.__setitem__}


def _holds_mask(index) -> bool:
    """Whether an index holds a boolean tensor (its selection's size is data the host must read)."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, torch.Tensor) and p.dtype == torch.bool for p in parts)


def _reason(func, args, kwargs) -> str | None:
    if func in HOST_READS:
        return "reads a value on the host"
    if func in HOST_DATA and not (args and isinstance(args[0], torch.Tensor)):
        return "makes a tensor from host data"
    if func in INDEXING and len(args) > 1 and _holds_mask(args[1]):
        return "indexes with a boolean mask"
    if _copies_from_host(func, args, kwargs):
        return "copies a CPU tensor to another device"
    return None


def _copies_from_host(func, args, kwargs) -> bool:
    """x.cuda(), x.to("cuda"), x.to(gpu_tensor), gpu.copy_(x), for a CPU tensor x."""
    if func is T.copy_:
        return args[0].device.type != "cpu" and args[1].device.type == "cpu"
    if func not in (T.to, T.cuda) or args[0].device.type != "cpu":
        return False
    if func is T.cuda:
        return True
    targets = [*args[1:], kwargs.get("device")]
    devices = [t.device if isinstance(t, torch.Tensor) else torch.device(t) for t in targets
               if isinstance(t, (torch.Tensor, torch.device)) or isinstance(t, str) and t.split(":")[0] in DEVICE_TYPES]
    return any(d.type != "cpu" for d in devices)


DEVICE_TYPES = ("cpu", "cuda", "meta", "mps", "xpu")


class HostTraffic(TorchFunctionMode):
    """Inside, every call that a CUDA graph could not record is listed in `found`
    ("item: reads a value on the host"), and runs as usual."""

    def __init__(self):
        super().__init__()
        self.found = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        reason = _reason(func, args, kwargs or {})
        if reason:
            self.found.append(f"{getattr(func, '__name__', func)}: {reason}")
        return func(*args, **(kwargs or {}))


def host_traffic(work) -> list[str]:
    """What work() does that a CUDA graph could not record (empty when it could)."""
    with HostTraffic() as watch:
        work()
    return watch.found
