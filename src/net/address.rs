//! The address check of outbound fetches (server-side request forgery): which addresses a tool
//! fed by a model may connect to, and a DNS resolver for reqwest that applies the check to the
//! addresses it resolves and hands only those to the connection (so the address checked is the
//! address connected to: no second lookup a rebinding DNS server could answer differently).
//!
//! Refused: loopback, private (RFC 1918, IPv6 unique-local), link-local (cloud metadata lives at
//! 169.254.169.254 and fd00:ec2::254), shared/CGNAT (100.64.0.0/10, Alibaba's metadata is
//! 100.100.100.200), multicast, broadcast, unspecified and "this network" (0.0.0.0/8), the
//! reserved 240.0.0.0/4, benchmarking 198.18.0.0/15, IPv6 site-local, and any IPv6 address that
//! embeds a refused IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`,
//! NAT64 `64:ff9b::/96`, 6to4 `2002::/16`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// Why `ip` may not be connected to, or None when it is a public address.
pub fn refused_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let o = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_unspecified() || o[0] == 0 {
        Some("unspecified")
    } else if ip.is_private() {
        Some("private")
    } else if ip.is_link_local() {
        Some(if o == [169, 254, 169, 254] {
            "cloud metadata"
        } else {
            "link-local"
        })
    } else if o[0] == 100 && (o[1] & 0xC0) == 64 {
        Some(if o == [100, 100, 100, 200] {
            "cloud metadata"
        } else {
            "shared (carrier-grade NAT)"
        })
    } else if ip.is_multicast() {
        Some("multicast")
    } else if ip.is_broadcast() || o[0] >= 240 {
        Some("reserved")
    } else if o[0] == 198 && (o[1] & 0xFE) == 18 {
        Some("benchmarking")
    } else if o[0] == 192 && o[1] == 0 && o[2] == 0 {
        Some("IETF protocol assignments")
    } else {
        None
    }
}

fn v6_reason(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    if ip.is_loopback() {
        return Some("loopback");
    }
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if let Some(v4) = ip.to_ipv4_mapped() {
        return v4_reason(v4);
    }
    // IPv4-compatible (deprecated ::a.b.c.d), NAT64 and 6to4 carry an IPv4 address.
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from(((hi as u32) << 16) | lo as u32);
    if s[..6] == [0, 0, 0, 0, 0, 0] {
        return Some(v4_reason(embedded(s[6], s[7])).unwrap_or("IPv4-compatible"));
    }
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        if let Some(r) = v4_reason(embedded(s[6], s[7])) {
            return Some(r);
        }
    }
    if s[0] == 0x2002 {
        if let Some(r) = v4_reason(embedded(s[1], s[2])) {
            return Some(r);
        }
    }
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        return Some("cloud metadata");
    }
    match s[0] {
        x if x & 0xfe00 == 0xfc00 => Some("private (unique local)"),
        x if x & 0xffc0 == 0xfe80 => Some("link-local"),
        x if x & 0xffc0 == 0xfec0 => Some("site-local"),
        x if x & 0xff00 == 0xff00 => Some("multicast"),
        _ => None,
    }
}

/// An address refused by the check, as a resolver error the caller can find in reqwest's error
/// chain.
#[derive(Debug, thiserror::Error)]
#[error("{host} resolves to {addr}, which is not a public address ({reason})")]
pub struct RefusedAddress {
    pub host: String,
    pub addr: IpAddr,
    pub reason: &'static str,
}

/// Which hosts skip the check: none by default; `allow_private` lets everything through.
#[derive(Debug, Clone, Default)]
pub struct AddressPolicy {
    pub allow_private: bool,
    /// Host names or IP literals (as written in URLs, lowercase) exempt from the check: a seam
    /// for tests against a server on 127.0.0.1, and for an intranet host the user trusts.
    pub allowed_hosts: Vec<String>,
}

impl AddressPolicy {
    fn exempt(&self, host: &str) -> bool {
        self.allow_private
            || self
                .allowed_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(host))
    }

    /// The check of one address of `host`.
    pub fn check(&self, host: &str, addr: IpAddr) -> Result<(), RefusedAddress> {
        if self.exempt(host) {
            return Ok(());
        }
        match refused_reason(addr) {
            Some(reason) => Err(RefusedAddress {
                host: host.to_string(),
                addr,
                reason,
            }),
            None => Ok(()),
        }
    }
}

/// reqwest's resolver extension point: the system resolver, then the check on every address.
/// A host with any refused address is refused whole (a rebinding server mixes good and bad).
pub struct CheckedResolver {
    pub policy: Arc<AddressPolicy>,
}

impl reqwest::dns::Resolve for CheckedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = Arc::clone(&self.policy);
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            for a in &addrs {
                policy.check(&host, a.ip())?;
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refused_and_public_addresses() {
        for (ip, why) in [
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("10.0.0.1", "private"),
            ("172.16.5.4", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("169.254.169.254", "cloud metadata"),
            ("169.254.1.1", "link-local"),
            ("100.100.100.200", "cloud metadata"),
            ("100.64.0.1", "shared (carrier-grade NAT)"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "reserved"),
            ("240.0.0.1", "reserved"),
            ("198.18.0.1", "benchmarking"),
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:169.254.169.254", "cloud metadata"),
            ("::127.0.0.1", "loopback"),
            ("64:ff9b::a00:1", "private"),
            ("2002:a9fe:a9fe::1", "cloud metadata"),
            ("fd00:ec2::254", "cloud metadata"),
            ("fc00::1", "private (unique local)"),
            ("fe80::1", "link-local"),
            ("fec0::1", "site-local"),
            ("ff02::1", "multicast"),
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(refused_reason(ip), Some(why), "{ip}");
        }
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(refused_reason(ip), None, "{ip}");
        }
    }

    #[test]
    fn policy_exemptions() {
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        let strict = AddressPolicy::default();
        let err = strict.check("intranet", ip).unwrap_err();
        assert_eq!(
            err.to_string(),
            "intranet resolves to 10.0.0.1, which is not a public address (private)"
        );
        let seam = AddressPolicy {
            allowed_hosts: vec!["Intranet".into()],
            ..Default::default()
        };
        assert!(seam.check("intranet", ip).is_ok());
        assert!(seam.check("other", ip).is_err());
        let open = AddressPolicy {
            allow_private: true,
            ..Default::default()
        };
        assert!(open.check("x", ip).is_ok());
    }
}
