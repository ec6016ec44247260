"""Our Redis connections pack commands with hiredis in one call (`core.services.bounded.HiredisPacker`):
the bytes must be redis-py's own for every argument redis-py accepts, and its refusals must stay."""

from __future__ import annotations

import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st

from core.services.bounded import HiredisPacker, _Bounded, _BoundedTcp

ARGUMENT = st.one_of(st.text(), st.binary(), st.integers(), st.floats(), st.binary().map(bytearray),
                     st.binary().map(memoryview))


def packed(connection: redis.Connection, *args) -> bytes:
    return b"".join(bytes(chunk) for chunk in connection.pack_command(*args))


@settings(max_examples=500, deadline=None)
@given(name=st.sampled_from(["HSET", "SET", "CONFIG SET", b"CLIENT SETNAME", "ZADD"]),
       args=st.lists(ARGUMENT, max_size=20))
def test_commands_pack_to_the_bytes_redis_py_sends(name, args):
    ours, theirs = _BoundedTcp(), redis.Connection()
    assert isinstance(ours._command_packer, HiredisPacker)
    assert packed(ours, name, *args) == packed(theirs, name, *args)


@pytest.mark.parametrize("value", [True, None, object(), [1, 2]])
def test_what_redis_py_refuses_is_refused_the_same_way(value):
    with pytest.raises(redis.DataError):
        _BoundedTcp().pack_command("SET", "k", value)


def test_a_string_utf8_cannot_encode_is_refused_as_redis_py_refuses_it():
    with pytest.raises(UnicodeEncodeError):
        _BoundedTcp().pack_command("SET", "k", "a\udc80")
    with pytest.raises(UnicodeEncodeError):
        redis.Connection().pack_command("SET", "k", "a\udc80")


def test_values_round_trip_through_the_workbench_redis(workbench, instance):
    r = workbench.thoughts.r
    assert issubclass(r.connection_pool.connection_class, _Bounded)
    key = f"test:packing:{instance}"
    values = {"text": "café ☕ 𝄞", "int": 12345678901234567890, "float": 0.1, "neg": -3, "empty": "",
              "bytes": b"raw \x00 bytes"}
    with r.pipeline() as p:
        p.hset(key, mapping=values)
        p.expire(key, 60)
        p.execute()
    back = r.hgetall(key)
    assert back == {"text": "café ☕ 𝄞", "int": "12345678901234567890", "float": "0.1", "neg": "-3", "empty": "",
                    "bytes": "raw \x00 bytes"}
    assert r.config_get("maxmemory-policy")  # a command of two words
    r.delete(key)
