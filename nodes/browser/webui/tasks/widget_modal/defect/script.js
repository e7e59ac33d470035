const overlay = document.getElementById('overlay');
document.getElementById('give-up').addEventListener('click', () => overlay.classList.remove('hidden'));
document.getElementById('cancel').addEventListener('click', () => overlay.classList.add('hidden'));
document.getElementById('confirm').addEventListener('click', () => {
  overlay.classList.add('hidden');
  const state = document.getElementById('state');
  state.textContent = 'Given up: key due in two weeks';
  state.classList.add('ended');
  document.getElementById('give-up').disabled = true;
});
