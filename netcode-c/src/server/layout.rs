//! The two layouts of `netcode_server_config_t` a program may have been
//! built with. The reference added `max_connect_token_lifetime` at its end
//! in 1.4.5 (120 bytes became 128 on 64-bit targets), without changing
//! the library's name, so a program built against an older header and
//! loaded with `libnetcode.so.1` passes the shorter struct. The exported
//! names the reference had read and write only the older, shorter prefix;
//! this library's header calls the `_v2` names, which read every field.

use std::mem::offset_of;

use crate::abi::netcode_server_config_t;

/// The bytes of the config before 1.4.5: every field up to
/// `max_connect_token_lifetime`.
pub(crate) const CONFIG_BYTES_BEFORE_1_4_5: usize =
    offset_of!(netcode_server_config_t, max_connect_token_lifetime);

/// How much of a `netcode_server_config_t` the caller's struct has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConfigLayout {
    /// This library's header (and the reference's since 1.4.5): every
    /// field (the `_v2` entries).
    Full,
    /// A header before 1.4.5: no `max_connect_token_lifetime` (the entries
    /// under the reference's names, which any program may have been built
    /// with); the field takes its default.
    BeforeTokenLifetime,
}

impl ConfigLayout {
    /// Reads the config at `config`; the fields this layout lacks take
    /// their defaults.
    ///
    /// # Safety
    ///
    /// `config` is aligned and readable for this layout's bytes.
    pub(crate) unsafe fn read(
        self,
        config: *const netcode_server_config_t,
    ) -> netcode_server_config_t {
        match self {
            // SAFETY: a whole readable config (this function's contract);
            // every field is plain data (integers, pointers, and function
            // pointers that are NULL or functions: C's side of the contract).
            Self::Full => unsafe { config.read() },
            Self::BeforeTokenLifetime => {
                let mut full = netcode_server_config_t::default();
                // SAFETY: the caller's `CONFIG_BYTES_BEFORE_1_4_5` readable
                // bytes (this function's contract) over the same fields of
                // a config of ours, which does not overlap it; the fields
                // are plain data as above.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        config.cast::<u8>(),
                        (&raw mut full).cast::<u8>(),
                        CONFIG_BYTES_BEFORE_1_4_5,
                    );
                }
                full
            }
        }
    }

    /// Writes the defaults into the config at `config`, as many bytes as
    /// this layout has.
    ///
    /// # Safety
    ///
    /// `config` is aligned and writable for this layout's bytes.
    pub(crate) unsafe fn write_defaults(self, config: *mut netcode_server_config_t) {
        let defaults = netcode_server_config_t::default();
        match self {
            // SAFETY: a whole writable config (this function's contract).
            Self::Full => unsafe { config.write(defaults) },
            // SAFETY: the caller's `CONFIG_BYTES_BEFORE_1_4_5` writable bytes
            // (this function's contract); ours are a local, apart.
            Self::BeforeTokenLifetime => unsafe {
                std::ptr::copy_nonoverlapping(
                    (&raw const defaults).cast::<u8>(),
                    config.cast::<u8>(),
                    CONFIG_BYTES_BEFORE_1_4_5,
                );
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_older_layout_is_read_and_written_to_its_end_only() {
        // A 128-byte config whose last field is a mark the older layout
        // must neither read nor write.
        let mut config = netcode_server_config_t {
            protocol_id: 0x1122,
            max_connect_token_lifetime: -77,
            ..netcode_server_config_t::default()
        };
        // SAFETY: a whole config (more than the older layout needs).
        let read = unsafe { ConfigLayout::BeforeTokenLifetime.read(&raw const config) };
        assert_eq!(read.protocol_id, 0x1122);
        assert_eq!(
            read.max_connect_token_lifetime,
            netcode_server_config_t::default().max_connect_token_lifetime
        );
        // SAFETY: as above.
        unsafe { ConfigLayout::BeforeTokenLifetime.write_defaults(&raw mut config) };
        assert_eq!(config.protocol_id, 0);
        assert_eq!(
            config.max_connect_token_lifetime, -77,
            "written past the older layout"
        );
        // SAFETY: as above.
        let read = unsafe { ConfigLayout::Full.read(&raw const config) };
        assert_eq!(read.max_connect_token_lifetime, -77);
    }

    #[cfg(target_pointer_width = "64")]
    #[test]
    fn the_older_layout_is_the_references_120_bytes() {
        assert_eq!(CONFIG_BYTES_BEFORE_1_4_5, 120);
        assert_eq!(size_of::<netcode_server_config_t>(), 128);
    }
}
