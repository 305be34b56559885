//! A pool of engines: each engine's worker takes the next deployment from one queue.

use std::sync::Mutex;

use anyhow::Result;

use super::backend::Backend;
use super::*;

/// Run the deployments across the pool: each engine's worker takes the next deployment from
/// one queue (in the matrix's order) and runs all its rounds, so one engine runs one
/// deployment at a time. A worker whose engine stops answering leaves the pool; the queue
/// goes on with the others, and what no engine is left for fails with that reason. Returns
/// why, when every engine was lost.
pub(super) async fn run_pool<B: Backend>(
    ctxs: Vec<RunCtx<'_, B>>,
    todo: &[Deployment],
) -> Result<Option<String>> {
    let first = ctxs.first().expect("invariant: a pool has engines");
    let m = &first.loaded.matrix;
    let order = schedule(todo.len(), 1, m.repeat.order, first.seed);
    let queue = Mutex::new(
        order
            .into_iter()
            .map(|(d, _)| d)
            .collect::<std::collections::VecDeque<_>>(),
    );
    let workers = ctxs.into_iter().map(|mut ctx| {
        let queue = &queue;
        async move {
            loop {
                let next = queue.lock().expect("queue lock").pop_front();
                let Some(di) = next else { return Ok(ctx) };
                ctx.run_deployments(&todo[di..=di]).await?;
                if ctx.lost.is_none() && !ctx.backend.alive().await {
                    ctx.mark_lost("stopped answering".into())?;
                }
                if ctx.lost.is_some() {
                    return Ok(ctx);
                }
            }
        }
    });
    let done: Vec<Result<RunCtx<'_, B>>> = futures_util::future::join_all(workers).await;
    let mut last = None;
    let mut all_lost = Some(Vec::new());
    for r in done {
        let ctx = r?;
        all_lost = all_lost.zip(ctx.lost.clone()).map(|(mut l, why)| {
            l.push(why);
            l
        });
        last = Some(ctx);
    }
    let left: Vec<usize> = queue
        .into_inner()
        .expect("queue lock")
        .into_iter()
        .collect();
    if let (Some(mut ctx), false) = (last, left.is_empty()) {
        let reason = "no engine of the pool is left to run it".to_string();
        for di in left {
            let cells: Vec<(Cell, u32)> = (1..=m.iterations)
                .flat_map(|i| todo[di].cells.iter().map(move |c| (c.clone(), i)))
                .filter(|(c, i)| !ctx.done.contains(&(c.key(), *i)))
                .collect();
            ctx.fail_cells(&cells, &reason)?;
        }
    }
    Ok(all_lost.map(|l| l.join("; ")))
}

/// The engines of the run (the pool, or the one Docker's CLI would use), connected when a
/// deployment needs Docker, with the facts the manifest keeps of a pool's engines.
pub(super) async fn connect_pool(
    opts: &RunOptions,
    needs_docker: bool,
) -> Result<(Vec<EngineAddr>, Vec<Engine>, Vec<EngineFacts>)> {
    let pooled = !opts.engines.is_empty();
    let addrs = match pooled {
        true => opts.engines.clone(),
        false => vec![crate::servers::engines::address::from_env(
            &crate::servers::engines::address::Env::current(),
        )
        .map_err(crate::servers::engines::docker::EngineUnavailable)?],
    };
    let mut pool: Vec<Engine> = Vec::new();
    if needs_docker {
        for a in &addrs {
            pool.push(Engine::connect_to(a).await?);
        }
    }
    let mut engine_facts = Vec::new();
    if pooled {
        for (a, e) in addrs.iter().zip(&pool) {
            engine_facts.push(EngineFacts {
                name: a.name.clone(),
                address: a.url(),
                client: match (&opts.client_engine, a.client_in_container) {
                    (Some(c), _) => format!("engine:{c}"),
                    (None, true) => "container".into(),
                    (None, false) => "process".into(),
                },
                host: e.host_facts().await?,
                lost: None,
            });
        }
    }
    Ok((addrs, pool, engine_facts))
}

/// The run's work: one worker on one engine (or none), else one per engine of the pool.
/// Returns why, when the run lost every engine it had.
pub(super) async fn run_workers(
    shared: &RunShared<'_>,
    pool: &[Engine],
    addrs: &[EngineAddr],
    todo: &[Deployment],
) -> Result<Option<String>> {
    if shared.loaded.matrix.repeat.duet && pool.len() <= 1 {
        // Two workers on one engine, one a side; the matrix check made sure of two servers.
        let addr = addrs.first().filter(|_| shared.pooled);
        let ctx = || {
            let backend = DockerBackend::new(shared, pool.first(), addr);
            RunCtx::new(shared, shared.engine_name(pool.first()), backend)
        };
        // Boxed: two workers' futures nested in one are too deep for the compiler's layout.
        Box::pin(duet::run_duet(ctx(), ctx(), todo)).await
    } else if pool.len() <= 1 {
        let addr = addrs.first().filter(|_| shared.pooled);
        let backend = DockerBackend::new(shared, pool.first(), addr);
        let mut ctx = RunCtx::new(shared, shared.engine_name(pool.first()), backend);
        ctx.run_deployments(todo).await?;
        Ok(ctx.lost)
    } else {
        let ctxs = pool
            .iter()
            .zip(addrs)
            .map(|(e, a)| {
                let backend = DockerBackend::new(shared, Some(e), Some(a));
                RunCtx::new(shared, shared.engine_name(Some(e)), backend)
            })
            .collect();
        run_pool(ctxs, todo).await
    }
}
