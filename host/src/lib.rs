//! hookhost: the host an agent embeds to run out-of-process hooks.
