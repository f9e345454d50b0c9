"""Which addresses a web fetch may connect to: public ones only, unless allowed.

"Not global" is not enough (``ipaddress``'s ``is_global`` lets some
reserved and multicast ranges through), so addresses are refused by
explicit ranges: this-network, private, shared (CGNAT), loopback,
link-local (which holds the cloud metadata service, 169.254.169.254),
IETF-reserved, documentation, benchmarking, multicast, future-use and
broadcast for IPv4; unspecified, loopback, IPv4-compatible, discard,
IETF-protocol, documentation, 6to4, unique-local, link-local, site-local
and multicast for IPv6; and cloud metadata addresses that are otherwise
public (Azure's 168.63.129.16). An IPv6 address that carries an IPv4 one
(IPv4-mapped ``::ffff:a.b.c.d``, NAT64 ``64:ff9b::/96``) is judged by the
IPv4 address it carries.

Spellings do not matter: names and literals alike go through
``getaddrinfo`` (which reads ``2130706433``, ``0177.0.0.1``, ``0x7f.1`` and
``127.1`` as 127.0.0.1), every address it returns is checked, and the
connection is then made to a checked address, never resolved again.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

#: Every range a fetch is refused (unless a policy allows it).
BLOCKED_NETWORKS: tuple[IPNetwork, ...] = tuple(
    ipaddress.ip_network(net)
    for net in (
        "0.0.0.0/8",  # this network
        "10.0.0.0/8",  # private
        "100.64.0.0/10",  # shared address space (CGNAT; Alibaba's metadata 100.100.100.200)
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local (AWS, GCP, Azure, OpenStack metadata 169.254.169.254)
        "172.16.0.0/12",  # private
        "192.0.0.0/24",  # IETF protocol assignments (Oracle metadata 192.0.0.192)
        "192.0.2.0/24",  # documentation
        "192.88.99.0/24",  # 6to4 relay anycast
        "192.168.0.0/16",  # private
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved for future use, broadcast included
        "168.63.129.16/32",  # Azure wireserver / metadata
        "::/128",  # unspecified
        "::1/128",  # loopback
        "::/96",  # IPv4-compatible (deprecated)
        "100::/64",  # discard
        "64:ff9b:1::/48",  # local-use NAT64
        "2001::/23",  # IETF protocol assignments (Teredo included)
        "2001:db8::/32",  # documentation
        "2002::/16",  # 6to4
        "fc00::/7",  # unique local (AWS metadata fd00:ec2::254)
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped or NAT64), if any."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def blocked_reason(address: IPAddress, allowed: Iterable[IPNetwork] = ()) -> str | None:
    """Why ``address`` may not be fetched from, or None if it may."""
    inner = embedded_ipv4(address)
    judged: IPAddress = inner if inner is not None else address
    if any(judged in net for net in allowed if net.version == judged.version):
        return None
    for net in BLOCKED_NETWORKS:
        if net.version == judged.version and judged in net:
            return f"{address}, in the non-public range {net}"
    return None


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to (for TCP), in the resolver's order; OSError if none."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: dict[IPAddress, None] = {}
    for _family, _type, _proto, _name, sockaddr in infos:
        text = str(sockaddr[0]).split("%", 1)[0]  # drop an IPv6 zone index
        seen.setdefault(ipaddress.ip_address(text), None)
    if not seen:
        raise OSError(f"{host} has no address")
    return list(seen)
