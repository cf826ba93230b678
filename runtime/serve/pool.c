/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool.c - warm sandboxes per (app, agent) (pool.h).
 *
 * One mutex guards the slots and their idle lists; nothing slow runs under
 * it: prepare and destroy happen with it released.  A slot (one pool) that
 * a reload retires stays allocated until no worker is making a sandbox for
 * it, then the last one out frees it.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <sodium.h>

#include "runtime/rmtree.h"
#include "runtime/serve/clock.h"
#include "runtime/serve/metrics.h"
#include "runtime/serve/pool.h"

#define POOL_MAX_WORKERS 4
#define POOL_BACKOFF_MIN_US 100000u
#define POOL_BACKOFF_MAX_US 30000000u

struct pool_slot {
	struct pool_slot *next;
	struct policy_entry *ent;   /* a reference */
	const char *agent;          /* in ent's policy, or NULL */
	struct pool_item *idle;
	unsigned nidle, making;
	int retired;
	unsigned fails;
	uint64_t retry_at_us;
	uint64_t held_since_us;     /* refill held back since (pool_running), 0 not */
};

struct pool {
	struct pool_opts o;
	pthread_mutex_t mu;
	pthread_cond_t cv;          /* CLOCK_MONOTONIC; workers wait here */
	struct pool_slot *slots;
	int stopping, draining;
	unsigned running;           /* executions running (pool_running) */
	int wake_fd;                /* eventfd: the watcher's idle set changed */
	pthread_t *workers;
	unsigned nworkers;
	pthread_t watcher;
	int watcher_started;
};

/* ---- items ------------------------------------------------------------- */

int pool_item_new(const struct sandbox_host *h, const char *work_dir, int work_fd, struct policy_entry *ent,
		  const char *agent, struct pool_item **out)
{
	struct pool_item *it = calloc(1, sizeof(*it));
	unsigned char rnd[16];
	char hex[33];

	*out = NULL;
	if (it == NULL)
		return -1;
	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(hex, sizeof(hex), rnd, sizeof(rnd));
	if ((size_t)snprintf(it->run_dir, sizeof(it->run_dir), "%s/pending-%s", work_dir, hex) >= sizeof(it->run_dir)) {
		free(it);
		return -1;
	}
	it->work_fd = work_fd;
	it->ent = policy_entry_get(ent);
	it->agent = agent;
	it->spec.pol = &ent->pol;
	it->spec.agent = agent;
	it->spec.run_dir = it->run_dir;
	if ((it->sb = sandbox_new(h, &it->spec)) == NULL) {
		pool_item_free(it);
		return -1;
	}
	*out = it;
	return 0;
}

int pool_item_make(const struct sandbox_host *h, const char *work_dir, int work_fd, struct policy_entry *ent,
		   const char *agent, int wait_ready, struct pool_item **out)
{
	if (pool_item_new(h, work_dir, work_fd, ent, agent, out) != 0)
		return -1;
	return sandbox_prepare((*out)->sb, wait_ready);
}

void pool_item_free(struct pool_item *it)
{
	if (it == NULL)
		return;
	sandbox_destroy(it->sb);
	policy_entry_put(it->ent);
	free(it);
}

int pool_item_discard(struct pool_item *it, char *err, size_t n)
{
	const char *base;
	char name[PATH_MAX];
	int fd;

	if (it == NULL)
		return 0;
	base = strrchr(it->run_dir, '/');
	snprintf(name, sizeof(name), "%s", base ? base + 1 : it->run_dir);
	fd = it->work_fd;
	/* destroyed first: nothing writes the directory any more */
	pool_item_free(it);
	return rmtree_at(fd, name, err, n);
}

/* The executor of an idle sandbox has ended (its pidfd is readable). */
static int item_dead(const struct pool_item *it)
{
	struct pollfd pfd = { sandbox_pidfd(it->sb), POLLIN, 0 };

	return pfd.fd < 0 || poll(&pfd, 1, 0) != 0;
}

/* Idle or failed sandboxes that never ran: gone with their directories. */
static void items_discard(const struct pool *p, struct pool_item *list)
{
	char err[512];

	while (list != NULL) {
		struct pool_item *next = list->next;

		if (pool_item_discard(list, err, sizeof(err)) != 0)
			serve_logf(p->o.log, p->o.log_arg, "pool: run directory not fully removed: %s", err);
		list = next;
	}
}

/* ---- slots (under mu) ---------------------------------------------------- */

static const char *slot_agent_label(const struct pool_slot *s)
{
	return s->agent ? s->agent : "";
}

static void slot_gauge(const struct pool *p, const struct pool_slot *s)
{
	metrics_pool_size(p->o.metrics, s->ent->pol.meta.app, slot_agent_label(s), s->retired ? 0 : s->nidle,
			  s->retired ? 0 : p->o.target);
}

static void wake_watcher(const struct pool *p)
{
	uint64_t one = 1;

	if (p->wake_fd >= 0 && write(p->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is full: the watcher has a wake-up pending anyway */
	}
}

/* Move s's idle sandboxes onto *dead (destroyed by the caller, unlocked). */
static void slot_empty(struct pool *p, struct pool_slot *s, struct pool_item **dead)
{
	while (s->idle != NULL) {
		struct pool_item *it = s->idle;

		s->idle = it->next;
		it->next = *dead;
		*dead = it;
	}
	s->nidle = 0;
	slot_gauge(p, s);
}

/* Unlink and free a retired slot no worker uses any more. */
static void slot_reap(struct pool *p, struct pool_slot *s)
{
	struct pool_slot **pp;

	if (!s->retired || s->making != 0 || s->idle != NULL)
		return;
	for (pp = &p->slots; *pp != NULL && *pp != s; pp = &(*pp)->next)
		;
	if (*pp != NULL)
		*pp = s->next;
	policy_entry_put(s->ent);
	free(s);
}

static int agent_eq(const char *a, const char *b)
{
	return a == NULL ? b == NULL : b != NULL && strcmp(a, b) == 0;
}

static struct pool_slot *slot_find(const struct pool *p, const struct policy_entry *ent, const char *agent)
{
	for (struct pool_slot *s = p->slots; s != NULL; s = s->next)
		if (!s->retired && s->ent == ent && agent_eq(s->agent, agent))
			return s;
	return NULL;
}

/* The live slot furthest below its target and out of backoff; *wake_us:
 * the earliest backoff end among those waiting (UINT64_MAX: none). */
static struct pool_slot *slot_pick(struct pool *p, uint64_t now_us, uint64_t *wake_us)
{
	struct pool_slot *best = NULL;
	unsigned best_gap = 0;

	*wake_us = UINT64_MAX;
	if (p->stopping || p->draining)
		return NULL;
	for (struct pool_slot *s = p->slots; s != NULL; s = s->next) {
		unsigned have = s->nidle + s->making, gap = have < p->o.target ? p->o.target - have : 0;

		if (s->retired || gap == 0)
			continue;
		if (s->retry_at_us > now_us) {
			if (s->retry_at_us < *wake_us)
				*wake_us = s->retry_at_us;
			continue;
		}
		/* A pool that still has a warm one waits for the running
		 * executions to end, within a bound (pool.h); an empty one
		 * refills at once, or the next request would start cold. */
		if (p->running > 0 && s->nidle > 0) {
			uint64_t until;

			if (s->held_since_us == 0)
				s->held_since_us = now_us;
			until = s->held_since_us + POOL_REFILL_DEFER_MS * 1000ull;
			if (until > now_us) {
				if (until < *wake_us)
					*wake_us = until;
				continue;
			}
		}
		s->held_since_us = 0;
		if (gap > best_gap) {
			best = s;
			best_gap = gap;
		}
	}
	return best;
}

/* ---- threads ----------------------------------------------------------- */

static void *pool_worker(void *arg)
{
	struct pool *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->stopping) {
		uint64_t wake_us, t0 = serve_now_us();
		struct pool_slot *s = slot_pick(p, t0, &wake_us);
		struct pool_item *it = NULL;
		struct sandbox_err se = { "", "" };
		char app[256], agent[256];
		unsigned fails;
		int rc, failed = 0, oom;

		if (s == NULL) {
			if (wake_us == UINT64_MAX) {
				pthread_cond_wait(&p->cv, &p->mu);
			} else {
				struct timespec ts = serve_deadline_us(wake_us);

				pthread_cond_timedwait(&p->cv, &p->mu, &ts);
			}
			continue;
		}
		s->making++;
		pthread_mutex_unlock(&p->mu);

		rc = pool_item_make(p->o.host, p->o.work_dir, p->o.work_fd, s->ent, s->agent, 1, &it);
		oom = it == NULL;
		if (rc != 0 && !oom)
			sandbox_failed(it->sb, &se);

		pthread_mutex_lock(&p->mu);
		s->making--;
		if (rc == 0 && !s->retired && !p->stopping && !p->draining) {
			metrics_sandbox_created(p->o.metrics, serve_now_us() - t0);
			it->next = s->idle;
			s->idle = it;
			s->nidle++;
			s->fails = 0;
			s->retry_at_us = 0;
			slot_gauge(p, s);
			wake_watcher(p);
			it = NULL;
		} else if (rc != 0) {
			uint64_t backoff = POOL_BACKOFF_MIN_US;

			for (unsigned i = 0; i < s->fails && backoff < POOL_BACKOFF_MAX_US; i++)
				backoff *= 2;
			if (backoff > POOL_BACKOFF_MAX_US)
				backoff = POOL_BACKOFF_MAX_US;
			s->fails++;
			s->retry_at_us = serve_now_us() + backoff;
			metrics_sandbox_failed(p->o.metrics);
			failed = 1;
		}
		/* The log line names the pool, which a reap may free. */
		fails = s->fails;
		snprintf(app, sizeof(app), "%s", s->ent->pol.meta.app);
		snprintf(agent, sizeof(agent), "%s", s->agent ? s->agent : "(none)");
		slot_reap(p, s);
		pthread_mutex_unlock(&p->mu);

		items_discard(p, it);
		if (failed)
			serve_logf(p->o.log, p->o.log_arg, "pool %s/%s: sandbox not prepared (%u in a row): %s%s%s", app,
				   agent, fails, se.stage[0] ? se.stage : "", se.stage[0] ? ": " : "",
				   oom ? "out of memory" : se.msg);
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Is it still idle in some slot?  Only compares pointers: `it` may have
 * been taken and freed since the poll set was built. */
static struct pool_slot *idle_owner(const struct pool *p, const struct pool_item *it)
{
	for (struct pool_slot *s = p->slots; s != NULL; s = s->next)
		for (const struct pool_item *i = s->idle; i != NULL; i = i->next)
			if (i == it)
				return s;
	return NULL;
}

static void idle_unlink(struct pool_slot *s, struct pool_item *it)
{
	struct pool_item **pp;

	for (pp = &s->idle; *pp != NULL && *pp != it; pp = &(*pp)->next)
		;
	if (*pp != NULL) {
		*pp = it->next;
		s->nidle--;
	}
}

static void *pool_watcher(void *arg)
{
	struct pool *p = arg;
	struct pollfd *pfd = NULL;
	struct pool_item **who = NULL;
	size_t cap = 0;

	pthread_mutex_lock(&p->mu);
	while (!p->stopping) {
		struct pool_item *dead = NULL;
		size_t n = 1;
		unsigned ndead = 0;

		for (struct pool_slot *s = p->slots; s != NULL; s = s->next)
			n += s->nidle;
		if (n > cap) {
			struct pollfd *np = realloc(pfd, n * sizeof(*pfd));
			struct pool_item **nw = np ? realloc(who, n * sizeof(*who)) : NULL;

			if (np != NULL)
				pfd = np;
			if (nw == NULL) {
				/* Out of memory: poll the wake fd alone for a while. */
				n = cap ? cap : 0;
			} else {
				who = nw;
				cap = n;
			}
		}
		if (cap == 0) {
			pthread_mutex_unlock(&p->mu);
			sleep(1);
			pthread_mutex_lock(&p->mu);
			continue;
		}
		pfd[0] = (struct pollfd){ p->wake_fd, POLLIN, 0 };
		n = 1;
		for (struct pool_slot *s = p->slots; s != NULL; s = s->next)
			for (struct pool_item *it = s->idle; it != NULL && n < cap; it = it->next) {
				pfd[n] = (struct pollfd){ sandbox_pidfd(it->sb), POLLIN, 0 };
				who[n++] = it;
			}
		pthread_mutex_unlock(&p->mu);

		if (poll(pfd, n, -1) < 0 && errno != EINTR) {
			sleep(1);
		}
		if (pfd[0].revents & POLLIN) {
			uint64_t v;

			if (read(p->wake_fd, &v, sizeof(v)) < 0) {
				/* nothing to read: another wake-up raced ours */
			}
		}

		pthread_mutex_lock(&p->mu);
		for (size_t i = 1; i < n; i++) {
			struct pool_slot *s;

			if (pfd[i].revents == 0 || (s = idle_owner(p, who[i])) == NULL || !item_dead(who[i]))
				continue;
			idle_unlink(s, who[i]);
			who[i]->next = dead;
			dead = who[i];
			ndead++;
			metrics_sandbox_failed(p->o.metrics);
			slot_gauge(p, s);
		}
		if (ndead > 0)
			pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (ndead > 0) {
			items_discard(p, dead);
			serve_logf(p->o.log, p->o.log_arg, "pool: %u idle sandbox%s died and %s replaced", ndead,
				   ndead == 1 ? "" : "es", ndead == 1 ? "is" : "are");
		}
		pthread_mutex_lock(&p->mu);
	}
	pthread_mutex_unlock(&p->mu);
	free(pfd);
	free(who);
	return NULL;
}

/* ---- the pool ---------------------------------------------------------- */

int pool_new(const struct pool_opts *o, struct pool **out, char *err, size_t n)
{
	struct pool *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;
	int rc = -1, e;

	*out = NULL;
	if (p == NULL) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	p->o = *o;
	p->wake_fd = -1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (p->o.target == 0) {
		*out = p;
		return 0;
	}
	if (p->o.workers == 0) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		p->o.workers = cpus < 1 ? 1 : cpus > POOL_MAX_WORKERS ? POOL_MAX_WORKERS : (unsigned)cpus;
	}
	if ((p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		snprintf(err, n, "pool: eventfd: %s", strerror(errno));
		goto out;
	}
	if ((p->workers = calloc(p->o.workers, sizeof(*p->workers))) == NULL) {
		snprintf(err, n, "out of memory");
		goto out;
	}
	for (; p->nworkers < p->o.workers; p->nworkers++) {
		if ((e = pthread_create(&p->workers[p->nworkers], NULL, pool_worker, p)) != 0) {
			snprintf(err, n, "pool: refill thread: %s", strerror(e));
			goto out;
		}
	}
	if ((e = pthread_create(&p->watcher, NULL, pool_watcher, p)) != 0) {
		snprintf(err, n, "pool: watcher thread: %s", strerror(e));
		goto out;
	}
	p->watcher_started = 1;
	*out = p;
	p = NULL;
	rc = 0;
out:
	pool_free(p);
	return rc;
}

void pool_apply(struct pool *p, const struct policy_set *set)
{
	struct pool_item *dead = NULL;

	if (p->o.target == 0)
		return;
	pthread_mutex_lock(&p->mu);
	for (struct pool_slot *s = p->slots, *next; s != NULL; s = next) {
		next = s->next;
		if (s->retired || policy_set_find(set, s->ent->pol.meta.app) == s->ent)
			continue;
		s->retired = 1;
		slot_empty(p, s, &dead);
		slot_reap(p, s);
	}
	for (unsigned i = 0; i < set->n; i++) {
		struct policy_entry *ent = set->entries[i];

		for (int64_t a = -1; a < (int64_t)ent->pol.nagents; a++) {
			const char *agent = a < 0 ? NULL : ent->pol.agents[a].name;
			struct pool_slot *s;

			if (slot_find(p, ent, agent) != NULL)
				continue;
			if ((s = calloc(1, sizeof(*s))) == NULL)
				continue; /* out of memory: that pair runs cold */
			s->ent = policy_entry_get(ent);
			s->agent = agent;
			s->next = p->slots;
			p->slots = s;
			slot_gauge(p, s);
		}
	}
	pthread_cond_broadcast(&p->cv);
	wake_watcher(p);
	pthread_mutex_unlock(&p->mu);
	items_discard(p, dead);
}

struct pool_item *pool_take(struct pool *p, const struct policy_entry *ent, const char *agent)
{
	struct pool_item *it = NULL, *dead = NULL;
	struct pool_slot *s;
	unsigned ndead = 0;

	if (p == NULL || p->o.target == 0)
		return NULL;
	pthread_mutex_lock(&p->mu);
	if ((s = slot_find(p, ent, agent)) != NULL) {
		/* One that died idle and the watcher has not seen yet is
		 * skipped here, so the request gets a live one or none. */
		while ((it = s->idle) != NULL) {
			s->idle = it->next;
			s->nidle--;
			it->next = NULL;
			if (!item_dead(it))
				break;
			it->next = dead;
			dead = it;
			ndead++;
			metrics_sandbox_failed(p->o.metrics);
		}
		slot_gauge(p, s);
		pthread_cond_broadcast(&p->cv);
		wake_watcher(p);
	}
	pthread_mutex_unlock(&p->mu);
	items_discard(p, dead);
	if (ndead > 0)
		serve_logf(p->o.log, p->o.log_arg, "pool: %u idle sandbox%s found dead at take and replaced", ndead,
			   ndead == 1 ? "" : "es");
	return it;
}

void pool_running(struct pool *p, int delta)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	if (delta > 0)
		p->running++;
	else if (p->running > 0)
		p->running--;
	if (p->running == 0)
		pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

cJSON *pool_state(struct pool *p, int *ready)
{
	cJSON *arr = cJSON_CreateArray();

	*ready = 1;
	if (arr == NULL || p == NULL)
		return arr;
	pthread_mutex_lock(&p->mu);
	for (struct pool_slot *s = p->slots; s != NULL; s = s->next) {
		cJSON *o;

		if (s->retired)
			continue;
		if (s->nidle == 0)
			*ready = 0;
		if ((o = cJSON_CreateObject()) == NULL)
			continue;
		cJSON_AddStringToObject(o, "app", s->ent->pol.meta.app);
		if (s->agent)
			cJSON_AddStringToObject(o, "agent", s->agent);
		else
			cJSON_AddNullToObject(o, "agent");
		cJSON_AddNumberToObject(o, "warm", s->nidle);
		cJSON_AddNumberToObject(o, "target", p->o.target);
		cJSON_AddItemToArray(arr, o);
	}
	pthread_mutex_unlock(&p->mu);
	return arr;
}

void pool_drain(struct pool *p)
{
	struct pool_item *dead = NULL;

	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->draining = 1;
	for (struct pool_slot *s = p->slots; s != NULL; s = s->next)
		slot_empty(p, s, &dead);
	pthread_cond_broadcast(&p->cv);
	wake_watcher(p);
	pthread_mutex_unlock(&p->mu);
	items_discard(p, dead);
}

void pool_free(struct pool *p)
{
	if (p == NULL)
		return;
	/* Idle sandboxes go first, killed and reaped in order, rather than
	 * with their workers' deaths (PR_SET_PDEATHSIG) below. */
	pool_drain(p);
	pthread_mutex_lock(&p->mu);
	p->stopping = 1;
	pthread_cond_broadcast(&p->cv);
	wake_watcher(p);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->nworkers; i++)
		pthread_join(p->workers[i], NULL);
	if (p->watcher_started)
		pthread_join(p->watcher, NULL);
	/* The threads are gone, and a worker that was making a sandbox freed
	 * it on seeing stopping: the slots are empty and ours alone. */
	while (p->slots != NULL) {
		struct pool_slot *s = p->slots;

		p->slots = s->next;
		policy_entry_put(s->ent);
		free(s);
	}
	free(p->workers);
	if (p->wake_fd >= 0)
		close(p->wake_fd);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p);
}
