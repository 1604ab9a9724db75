"""onnx-light native runtime: kernels, executor, session, tuning"""

from collections.abc import Sequence
from typing import Annotated

import numpy
from numpy.typing import NDArray


class InvalidArgument(ValueError):
    pass

class NotImplemented(NotImplementedError):
    pass

class Cancelled(RuntimeError):
    pass

class ResourceExhausted(MemoryError):
    pass

class InternalError(RuntimeError):
    pass

class TuningSource:
    pass

class TuningParameter:
    """One tuning parameter of a kernel's schema."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def type(self) -> str: ...

    @property
    def default(self) -> int | float | bool | str: ...

    @property
    def minimum(self) -> int | float | None: ...

    @property
    def maximum(self) -> int | float | None: ...

    @property
    def values(self) -> list[str] | None: ...

    @property
    def meaning(self) -> str: ...

class RegionEvent:
    """One parallel region a kernel opened (native/executor/region_events.h)."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def kernel(self) -> str: ...

    @property
    def total(self) -> int: ...

    @property
    def grain(self) -> int: ...

    @property
    def requested_participants(self) -> int: ...

    @property
    def admitted_participants(self) -> int: ...

    @property
    def observed_participants(self) -> int: ...

    @property
    def joined_participants(self) -> int: ...

    @property
    def nested(self) -> bool: ...

    @property
    def wall_ns(self) -> int: ...

    @property
    def cpu_ns(self) -> int: ...

    @property
    def dispatch_ns(self) -> int: ...

    @property
    def first_join_ns(self) -> int: ...

    @property
    def end_wait_ns(self) -> int: ...

class AllocationStats:
    """An allocator's counters."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def allocations(self) -> int: ...

    @property
    def bytes_allocated(self) -> int: ...

    @property
    def current_bytes(self) -> int: ...

    @property
    def peak_bytes(self) -> int: ...

def data_type_name(arg: int, /) -> str: ...

class KernelRegistration:
    """One kernel registration: an op over an opset range, in one family."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def domain(self) -> str: ...

    @property
    def op(self) -> str: ...

    @property
    def since_version(self) -> int: ...

    @property
    def end_version(self) -> int: ...

    @property
    def family(self) -> str: ...

    @property
    def element_types(self) -> list[str]: ...

    @property
    def dispatch_input(self) -> int: ...

    @property
    def tuning(self) -> list[TuningParameter]: ...

    @property
    def calibratable(self) -> bool: ...

def registered_kernels() -> list[KernelRegistration]:
    """
    Every kernel registration: domain, op, opset range (end -1: open), family, element types (of input dispatch_input), tuning parameters.
    """

TUNING_ABI: int = ...

class CacheLevel:
    """One cache of cpu0 (sysfs)."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def level(self) -> int: ...

    @property
    def type(self) -> str: ...

    @property
    def size_bytes(self) -> int: ...

class ProcessorDescriptor:
    """The processor, as tuning profiles name it."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def architecture(self) -> str: ...

    @property
    def vendor(self) -> str: ...

    @property
    def family(self) -> int: ...

    @property
    def model(self) -> int: ...

    @property
    def stepping(self) -> int: ...

    @property
    def microarchitecture(self) -> str: ...

    @property
    def model_name(self) -> str: ...

    @property
    def isa_features(self) -> list[str]: ...

    @property
    def isa_level(self) -> str: ...

    @property
    def caches(self) -> list[CacheLevel]: ...

    @property
    def physical_cores(self) -> int: ...

    @property
    def logical_cores(self) -> int: ...

class ExecutionDescriptor:
    """A CpuExecutionPolicy as profiles name it."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def threads(self) -> int: ...

    @property
    def affinity(self) -> list[int]: ...

class TuningSchema:
    """A kernel's tuning schema: its key, the key's parts, parameters."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def key(self) -> str: ...

    @property
    def domain(self) -> str: ...

    @property
    def op(self) -> str: ...

    @property
    def element_type(self) -> str: ...

    @property
    def family(self) -> str: ...

    @property
    def tuning_abi(self) -> int: ...

    @property
    def calibratable(self) -> bool: ...

    @property
    def params(self) -> list[TuningParameter]: ...

class KernelRunResult:
    """One run_kernel call: outputs, region events, time, allocations."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def outputs(self) -> list[tuple[bytes, list[int], int] | None]: ...

    @property
    def regions(self) -> list[RegionEvent]: ...

    @property
    def compute_ns(self) -> int: ...

    @property
    def allocations(self) -> int: ...

    @property
    def bytes_allocated(self) -> int: ...

    @property
    def peak_bytes(self) -> int: ...

    @property
    def peak_scratch(self) -> int: ...

class ParameterChoice:
    """A calibrator's choice for one parameter, and why."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def default(self) -> int | float | bool | str: ...

    @property
    def selected(self) -> int | float | bool | str: ...

    @property
    def changed(self) -> bool: ...

    @property
    def reason(self) -> str: ...

    @property
    def measured(self) -> bool: ...

class SizeMeasurement:
    """The candidates timed at one size (raw samples and medians)."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def size(self) -> int: ...

    @property
    def samples_ns(self) -> dict[str, list[int]]: ...

    @property
    def median_ns(self) -> dict[str, int]: ...

    @property
    def rejected(self) -> list[str]: ...

class CalibrationEvidence:
    """What a calibrator measured and where its search stopped."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def sizes(self) -> list[SizeMeasurement]: ...

    @property
    def confirmations(self) -> list[SizeMeasurement]: ...

    @property
    def crossover(self) -> int | None: ...

    @property
    def rejected(self) -> list[str]: ...

    @property
    def stop_reason(self) -> str: ...

class CalibrationAccount:
    """What a calibration spent of its budget."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def spent_ns(self) -> int: ...

    @property
    def budget_ns(self) -> int: ...

    @property
    def runs(self) -> int: ...

    @property
    def peak_memory_bytes(self) -> int: ...

    @property
    def max_threads_used(self) -> int: ...

class CalibrationReport:
    """One schema's calibration: choices, evidence, accounting."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def schema_key(self) -> str: ...

    @property
    def calibrator(self) -> str: ...

    @property
    def choices(self) -> list[ParameterChoice]: ...

    @property
    def evidence(self) -> CalibrationEvidence: ...

    @property
    def budget(self) -> CalibrationAccount: ...

def host_isa() -> str:
    """
    The best ISA level with kernel code this CPU supports: portable, avx2, avx512 or neon.
    """

def max_isa() -> str:
    """
    The ISA level kernels may use in this process (ONNX_LIGHT_MAX_ISA or set_max_isa; fixed at first use).
    """

def set_max_isa(arg: str, /) -> bool:
    """
    Caps the kernels' ISA for this process; false once kernels have chosen under another cap.
    """

def host_processor() -> ProcessorDescriptor:
    """
    The processor descriptor of this machine (architecture, vendor, model, ISA features, caches, cores).
    """

def execution_descriptor(num_threads: int = ..., affinity: Sequence[int] = ...) -> ExecutionDescriptor:
    """
    The execution descriptor of a CpuExecutionPolicy (effective threads, affinity).
    """

def x86_isa_level(arg: Sequence[str], /) -> str: ...

def aarch64_isa_level(arg: Sequence[str], /) -> str: ...

def tuning_schemas() -> list[TuningSchema]:
    """
    Every registered tuning schema: key, its parts, parameters, calibratable.
    """

class TableTuningSource(TuningSource):
    """Profile values per schema key with their precedence tier."""

    def __init__(self) -> None: ...

    def add(self, schema_key: str, param: str, value: object, source: str) -> None:
        """
        Records a value; raises ValueError for an unknown key or parameter, a wrong type or bounds.
        """

    def resolve(self, arg: str, /) -> dict[str, tuple[int | float | bool | str, str]]:
        """What a session would resolve for a schema: {param: (value, source)}."""

    def rejected(self) -> list[str]: ...

class ForcedParallelTuning(TuningSource):
    """
    The forced-parallel policy: every parallel.* threshold of every schema at its minimum (native/tuning/forced_parallel.h).
    """

    def __init__(self) -> None: ...

    def resolve(self, arg: str, /) -> dict[str, tuple[int | float | bool | str, str]]:
        """What a session would resolve for a schema: {param: (value, source)}."""

def run_kernel(op: str, opset: int, domain: str = ..., inputs: list = ..., attributes: dict = ..., tuning: dict = ..., num_threads: int = ..., num_outputs: int = ..., node_name: str = ..., memory_limit: int = ..., tuning_source: TuningSource | None = ...) -> KernelRunResult:
    """
    Runs one registered kernel; inputs are (bytes, shape, onnx_type) triples or None; tuning values come from tuning_source (else the portable defaults) then the tuning overrides. Returns outputs (triples), region events, compute_ns and allocation stats. Use onnx_light.kernel_tuning.run_kernel for numpy arrays.
    """

def calibrate(schema_key: str, budget_ns: int, memory_bytes: int, threads: int, min_size: int = ..., max_size: int = ..., repetitions: int = ..., margin: float = ..., num_inputs: int = ..., opset: int = ..., attributes: dict = ...) -> CalibrationReport:
    """
    Runs the calibrator of one schema within the budget; returns choices, evidence and accounting.
    """

class CpuExecutionPolicy:
    """
    How a session may use the CPU: num_threads (0 = one per physical core, 1 = serial), spin_microseconds, affinity (CPU ids, empty = no pinning), join_wait_microseconds (a region's caller waits this long for its workers to join: 0 for serving; the forced-parallel test policy sets it).
    """

    def __init__(self, num_threads: int = ..., spin_microseconds: int = ..., affinity: object | None = ..., join_wait_microseconds: int = ...) -> None: ...

    @property
    def num_threads(self) -> int: ...

    @property
    def join_wait_microseconds(self) -> int: ...

    @property
    def spin_microseconds(self) -> int: ...

    @property
    def affinity(self) -> list[int]: ...

    def effective_threads(self) -> int: ...

    def __repr__(self) -> str: ...

class RunOptions:
    """
    Per-run options: terminate (set True, even from another thread, to cancel a running run) and timeout_seconds (0 = none).
    """

    def __init__(self) -> None: ...

    @property
    def terminate(self) -> bool: ...

    @terminate.setter
    def terminate(self, arg: bool, /) -> None: ...

    @property
    def timeout_seconds(self) -> float: ...

    @timeout_seconds.setter
    def timeout_seconds(self, arg: float, /) -> None: ...

class Graph:
    """A model graph under construction (see onnx_light/_model.py)."""

    def __init__(self) -> None: ...

    @property
    def name(self) -> str: ...

    @name.setter
    def name(self, arg: str, /) -> None: ...

    def set_opset(self, arg0: str, arg1: int, /) -> None: ...

    def add_input(self, name: str, type: object | None, dims: object | None) -> None: ...

    def add_output(self, name: str, type: object | None, dims: object | None) -> None: ...

    def add_value_info(self, name: str, type: object | None, dims: object | None) -> None: ...

    def add_initializer(self, arg0: str, arg1: object, /) -> None: ...

    def add_node(self, arg0: str, arg1: str, arg2: str, arg3: Sequence[str], arg4: Sequence[str], arg5: list, /) -> None: ...

class NodeEvent:
    """One node of a run: its time and what it allocated."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def op(self) -> str: ...

    @property
    def node(self) -> str: ...

    @property
    def duration_ns(self) -> int: ...

    @property
    def allocations(self) -> int: ...

    @property
    def bytes_allocated(self) -> int: ...

    @property
    def copies(self) -> int: ...

    @property
    def peak_scratch_bytes(self) -> int: ...

class ConstantMemory:
    """
    A session's constant memory: initializers retained and released (every consumer absorbed them), those consumed while packed, and what the absorbing kernels hold in their place.
    """

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def retained_bytes(self) -> int: ...

    @property
    def released_bytes(self) -> int: ...

    @property
    def released_initializers(self) -> int: ...

    @property
    def absorbed_held_bytes(self) -> int: ...

    @property
    def consumed_initializers(self) -> int: ...

class TuningValueReport:
    """One resolved tuning value of one node's kernel, and its source."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def node(self) -> str: ...

    @property
    def schema(self) -> str: ...

    @property
    def parameter(self) -> str: ...

    @property
    def value(self) -> str: ...

    @property
    def source(self) -> str: ...

class Session:
    @staticmethod
    def create(graph: Graph, policy: CpuExecutionPolicy, tuning_source: TuningSource | None, memory_limit_bytes: int = ...) -> Session:
        """
        Creates a session from `graph`, which it takes over (the Graph object is left empty).
        """

    def run(self, feeds: list, output_names: Sequence[str], run_options: RunOptions | None) -> list[object]: ...

    def run_with_events(self, feeds: list, output_names: Sequence[str], run_options: RunOptions | None) -> tuple[list[object], list[NodeEvent], list[RegionEvent]]:
        """As run, also returning (node events, region events)."""

    def tuning_report(self) -> list[TuningValueReport]:
        """
        For every kernel instance: node, schema, parameter, value and where the value came from.
        """

    def memory(self) -> AllocationStats:
        """The session allocator's counters."""

    def constant_memory(self) -> ConstantMemory:
        """
        Initializer bytes retained and released, and what absorbing kernels hold in their place.
        """

    @property
    def policy(self) -> CpuExecutionPolicy: ...

    @property
    def memory_limit_bytes(self) -> int: ...

class BuildInfo:
    """How the extension was compiled and which ISA its kernels use here."""

    def to_dict(self) -> dict:
        """The fields as plain Python data (records as dicts), e.g. for JSON."""

    def __repr__(self) -> str: ...

    @property
    def compilation_mode(self) -> str: ...

    @property
    def optimized(self) -> bool: ...

    @property
    def assertions(self) -> bool: ...

    @property
    def compiler(self) -> str: ...

    @property
    def architecture(self) -> str: ...

    @property
    def isa_compiled(self) -> list[str]: ...

    @property
    def isa_supported(self) -> str: ...

    @property
    def isa_selected(self) -> str: ...

    @property
    def isa_cap(self) -> str | None: ...

def native_build_info() -> BuildInfo: ...

class LoadedModel:
    """
    A model parsed natively: skeleton (serialized ModelProto without its large initializers' payloads) and those initializers, held natively.
    """

    @property
    def skeleton(self) -> bytes: ...

    @property
    def source_files(self) -> list:
        """
        (path, size, device, inode, mtime_ns, ctime_ns, fingerprint or None) of every file the load read: the model file, then its external data files (model_loader.h, SourceFile); a fingerprint for recently written files (equal fingerprints: equal bytes), for pickling's check.
        """

    def names(self) -> list[str]: ...

    def __contains__(self, arg: str, /) -> bool: ...

    def __len__(self) -> int: ...

    def describe(self, arg: str, /) -> tuple[int, list[int]]:
        """(ONNX element type number, dims) of a held initializer."""

    def bytes_view(self, arg: str, /) -> Annotated[NDArray[numpy.uint8], dict(shape=(None,), writable=False)]:
        """The initializer's bytes as a read-only uint8 array (no copy)."""

    def add_to_graph(self, arg0: Graph, arg1: str, /) -> None:
        """Adds the held initializer `name` to graph g, borrowed (no copy)."""

    def release_payloads(self) -> None:
        """
        Drops this object's hold on every payload (names, types and shapes stay): once a session has the weights, they live as long as it needs them, not as long as this object.
        """

def load_model_file(path: str, min_elements: int, hash_files_newer_than_ns: int = ...) -> LoadedModel:
    """
    Parses an ONNX model file natively; initializers above min_elements stay native. Files written less than hash_files_newer_than_ns before the load (-1: all) are fingerprinted (source_files).
    """

def load_model_bytes(data: bytes, base_dir: str, min_elements: int, borrow: bool = ..., hash_files_newer_than_ns: int = ...) -> LoadedModel:
    """
    Parses a serialized ONNX model natively (external data resolved in base_dir). With borrow, the large initializers are read in place from `data`, which they keep alive (no copy); else copied.
    """

def constant_page_policy() -> str:
    """
    How fresh large blocks of packed weights meet transparent huge pages (native/core/page_policy.h): 'huge', 'system' or 'small', optionally with '+prefault'. ONNX_LIGHT_CONSTANT_PAGES sets it when the extension loads.
    """

def set_constant_page_policy(policy: str) -> None:
    """
    Sets the page policy of packed weights allocated from now on (constant_page_policy names them); InvalidArgument for another name.
    """
