"""The address checks behind fetch_url: explicit ranges, embedded IPv4, allowances."""

from __future__ import annotations

import ipaddress

import pytest

from agent_smith.toolkits.ssrf import blocked_reason, embedded_ipv4


@pytest.mark.parametrize(
    "address",
    [
        "0.0.0.0", "10.1.2.3", "100.64.0.1", "127.0.0.1", "127.255.255.254", "169.254.169.254",
        "172.31.255.255", "192.0.0.192", "192.0.2.10", "192.88.99.1", "192.168.0.1",
        "198.19.0.1", "198.51.100.7", "203.0.113.9", "224.0.0.251", "239.255.255.250",
        "240.0.0.1", "255.255.255.255", "168.63.129.16", "100.100.100.200",
        "::", "::1", "::127.0.0.1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",
        "64:ff9b::a00:1", "64:ff9b:1::1", "100::1", "2001::1", "2001:db8::1", "2002:c0a8:101::1",
        "fc00::1", "fd00:ec2::254", "fe80::1", "fec0::1", "ff02::1",
    ],
)  # fmt: skip
def test_non_public_addresses_are_refused(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "address",
    ["93.184.215.14", "1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", "::ffff:93.184.215.14",
     "64:ff9b::808:808", "2a00:1450:4001:80b::200e"],
)  # fmt: skip
def test_public_addresses_pass(address: str) -> None:
    assert blocked_reason(ipaddress.ip_address(address)) is None


def test_ranges_that_is_global_lets_through_are_refused() -> None:
    # ipaddress calls these global; a fetch must not reach them all the same.
    for address in ("224.0.0.1", "192.88.99.1", "168.63.129.16"):
        assert ipaddress.ip_address(address).is_global or address == "168.63.129.16"
        assert blocked_reason(ipaddress.ip_address(address)) is not None


def test_the_ipv4_inside_an_ipv6_address_is_the_one_judged() -> None:
    mapped = ipaddress.ip_address("::ffff:7f00:1")
    assert embedded_ipv4(mapped) == ipaddress.ip_address("127.0.0.1")
    assert embedded_ipv4(ipaddress.ip_address("64:ff9b::a9fe:a9fe")) == ipaddress.ip_address(
        "169.254.169.254"
    )
    assert embedded_ipv4(ipaddress.ip_address("2606:4700::1")) is None
    assert "127.0.0.0/8" in (blocked_reason(mapped) or "")


def test_an_allowed_network_lets_its_addresses_through_and_no_others() -> None:
    allowed = [ipaddress.ip_network("10.0.0.0/8")]
    assert blocked_reason(ipaddress.ip_address("10.2.3.4"), allowed) is None
    assert blocked_reason(ipaddress.ip_address("::ffff:10.2.3.4"), allowed) is None
    assert blocked_reason(ipaddress.ip_address("192.168.0.1"), allowed) is not None
