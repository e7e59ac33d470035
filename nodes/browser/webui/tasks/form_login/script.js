document.getElementById('login').addEventListener('click', () => {
  const ok = document.getElementById('user').value === 'admin' && document.getElementById('password').value === 'open sesame';
  document.getElementById('error').classList.toggle('hidden', ok);
  document.getElementById('login').textContent = ok ? 'Unlocked' : 'Try again';
});
