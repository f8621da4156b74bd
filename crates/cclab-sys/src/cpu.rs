//! CPU placement and scheduling of the calling thread, and what the machine reports about
//! its CPUs (online count, time stolen by the hypervisor).

/// Sets the calling thread's timer slack (ns); 1 makes sleeps wake on time.
pub fn set_timer_slack(ns: u64) {
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
}

/// Put the calling thread under SCHED_FIFO at `prio`; false if not allowed.
pub fn set_realtime(prio: i32) -> bool {
    let p = libc::sched_param {
        sched_priority: prio,
    };
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &p) == 0 }
}

/// CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0
    {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Restrict the calling thread to `cpus` (best effort; false if not applied).
pub fn pin_thread(cpus: &[usize]) -> bool {
    if cpus.is_empty() {
        return false;
    }
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
}

/// Where a run's threads go: the element alone on the last allowed CPU, the endpoints
/// (sender, receiver) on the others; `None` with fewer than two CPUs.
pub fn placement() -> Option<(Vec<usize>, Vec<usize>)> {
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        return None;
    }
    let (rest, last) = cpus.split_at(cpus.len() - 1);
    Some((last.to_vec(), rest.to_vec()))
}

/// Pin the calling thread as the element (`element` true) or an endpoint, per [`placement`].
pub fn place(element: bool) {
    if let Some((e, r)) = placement() {
        pin_thread(if element { &e } else { &r });
    }
}

/// CPU time the hypervisor has taken from this machine so far, summed over its CPUs, ms
/// (`steal` of the `cpu` line of /proc/stat); None where the kernel does not report it.
pub fn steal_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let steal: u64 = line.split_whitespace().nth(8)?.parse().ok()?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| steal as f64 * 1000.0 / hz as f64)
}

/// CPUs online on this machine.
pub fn online_cpus() -> u32 {
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    n.max(1) as u32
}
