"""Resolves asyncio futures for the ``*_async`` methods.

Native futures settle on a context's timeline, whose callbacks only post an id to a native queue.
One daemon thread here waits on that queue with the GIL released and settles each asyncio future
on its own loop with ``call_soon_threadsafe``. No Python object is touched by native threads.
"""
import asyncio
import atexit
import concurrent.futures
import threading

from . import _core

_lock = threading.Lock()
_entries = {}
_thread = None
_stopping = False
_STOP_ID = 0  # native pending ids start at 1


def _resolver():
    while not _stopping:
        for pending_id in _core.completion_wait(1000):
            with _lock:
                entry = _entries.pop(pending_id, None)
            if entry is not None:
                entry()


def _stop_resolver():
    """Ends the resolver before interpreter shutdown: a daemon thread that wakes up in native code
    during finalization would be torn down mid-call and abort the process."""
    global _stopping
    _stopping = True
    if _thread is not None:
        _core.completion_post(_STOP_ID)
        _thread.join(timeout=5)


def _ensure_thread():
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_resolver, name="webnn-async-resolver", daemon=True)
            _thread.start()
            atexit.register(_stop_resolver)


def _settle(future, pending, convert):
    if future.done():
        return
    try:
        value = pending.result()
        if convert is not None:
            value = convert(value)
    except BaseException as error:  # delivered to the awaiting coroutine
        future.set_exception(error)
    else:
        future.set_result(value)


def awaitable(pending, convert=None):
    """An asyncio future, on the running loop, for a native pending operation."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    _ensure_thread()

    def on_done():
        loop.call_soon_threadsafe(_settle, future, pending, convert)

    with _lock:
        _entries[pending.id] = on_done
    pending.arm()
    return future


def concurrent_future(pending, convert=None):
    """A concurrent.futures.Future for a native pending operation (usable from any thread)."""
    future = concurrent.futures.Future()
    _ensure_thread()

    def on_done():
        _settle_concurrent(future, pending, convert)

    with _lock:
        _entries[pending.id] = on_done
    pending.arm()
    return future


def _settle_concurrent(future, pending, convert):
    try:
        value = pending.result()
        if convert is not None:
            value = convert(value)
    except BaseException as error:
        future.set_exception(error)
    else:
        future.set_result(value)


def resolved(value):
    """An asyncio future that is already resolved (for calls with nothing to wait for)."""
    future = asyncio.get_running_loop().create_future()
    future.set_result(value)
    return future
